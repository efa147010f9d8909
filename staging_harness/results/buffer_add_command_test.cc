#include "staging_harness/results/buffer_add_command.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "replay_buffer/buffer_command.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/test_records.h"
#include "staging_harness/search/episode_file.h"

namespace phaseloop::search {
namespace {

namespace records = replay_buffer::test_records;

int RunCli(std::vector<std::string> args) {
  CLI::App app("phaseloop");
  int exit_code = 0;
  replay_buffer::AddBufferCommand(app, exit_code);
  AddBufferAddCommand(app, exit_code);
  args.insert(args.begin(), "phaseloop");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}

// A corpus manifest with two modules, as `phaseloop corpus build` writes it.
std::string WriteCorpus(const std::string& dir) {
  std::ofstream(dir + "/manifest.json") << R"({
    "format": "phaseloop-corpus-v1", "convention": "real-build",
    "opt_level": "Oz",
    "modules": [
      {"module_hash": "00000000000000000000000000000001", "name": "a/a",
       "split": "train", "ir_count_oz": 100, "text_size_oz": 1000},
      {"module_hash": "00000000000000000000000000000002", "name": "b/b",
       "split": "validation", "ir_count_oz": 50, "text_size_oz": 500}]})";
  return dir;
}

TEST(BufferAddCommandTest, AddsModulesAndEpisodesIdempotently) {
  const std::string dir = testing::MakeTempDir();
  const std::string buffer = dir + "/buffer.db";
  const std::string episodes = dir + "/run.episodes";
  {
    auto sink = FileEpisodeSink::Open(episodes);
    ASSERT_TRUE(sink.ok()) << sink.status();
    ASSERT_TRUE((*sink)
                    ->Write(records::MakeEpisode(
                        "e1", "00000000000000000000000000000001", 3, 1))
                    .ok());
    ASSERT_TRUE((*sink)
                    ->Write(records::MakeEpisode(
                        "e2", "00000000000000000000000000000002", 2, 2))
                    .ok());
  }
  for (int round = 0; round < 2; ++round) {  // the second adds nothing new
    ASSERT_EQ(RunCli({"buffer", "add", "--buffer", buffer, "--corpus",
                      WriteCorpus(dir), "--episodes", episodes}),
              0);
  }
  auto store = replay_buffer::OpenReplayStore(buffer);
  ASSERT_TRUE(store.ok()) << store.status();
  replay_buffer::EpisodeFilter train;
  train.split = "train";
  auto keys = (*store)->ListEpisodes(train);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);  // e1 only: its module's split is train
  auto all = (*store)->ListEpisodes(replay_buffer::EpisodeFilter());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
}

TEST(BufferAddCommandTest, BadInputsAreNamed) {
  const std::string dir = testing::MakeTempDir();
  EXPECT_EQ(RunCli({"buffer", "add", "--buffer", dir + "/b.db"}), 2);
  EXPECT_EQ(RunCli({"buffer", "add", "--buffer", dir + "/b.db", "--corpus",
                    dir + "/missing"}),
            2);
  EXPECT_EQ(RunCli({"buffer", "add", "--buffer", dir + "/b.db", "--episodes",
                    dir + "/missing.episodes"}),
            2);
  // Refused before the buffer is opened: no empty buffer file left.
  EXPECT_FALSE(std::filesystem::exists(dir + "/b.db"));
  std::ofstream(dir + "/garbage.episodes") << "not an episode file at all";
  EXPECT_NE(RunCli({"buffer", "add", "--buffer", dir + "/b.db", "--episodes",
                    dir + "/garbage.episodes"}),
            0);
}

}  // namespace
}  // namespace phaseloop::search
