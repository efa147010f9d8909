#include "staging_harness/search/search_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/testing/test_util.h"
#include "nlohmann/json.hpp"
#include "replay_buffer/replay_store.h"
#include "staging_harness/search/best_sequences.h"
#include "staging_harness/search/episode_file.h"
#include "staging_harness/search/module_search.h"

namespace phaseloop::search {
namespace {

SearchFlags Flags(const std::string& dir) {
  SearchFlags flags;
  flags.inputs = {"compiler_driver/fixtures/bits.c"};
  flags.strategy = "random";
  flags.objective = "ir_count";
  // Searches end on work, so every machine, loaded or idle, finds the same;
  // the clock is only a safety net.
  flags.budget_seconds = 3600;
  flags.max_evaluations = 40;
  flags.workers = 1;
  flags.episodes_out = dir + "/episodes.bin";
  flags.worker_binary = "staging_harness/workers/session_worker";
  return flags;
}

TEST(SearchCommand, TableNamesTheMetricsAndFilesAreWritten) {
  const std::string dir = testing::MakeTempDir();
  std::ostringstream out, err;
  ASSERT_EQ(RunSearchCommand(Flags(dir), out, err), 0) << err.str();
  EXPECT_NE(out.str().find("bits.c"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("text_oz_ratio"), std::string::npos);
  EXPECT_NE(out.str().find("geomean_oz_ratio"), std::string::npos);
  // The whole object beside .text: its columns and its ratio to -Oz.
  EXPECT_NE(out.str().find("found alloc"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("alloc_oz_ratio "), std::string::npos) << out.str();
  EXPECT_NE(err.str().find("[1/1] bits.c"), std::string::npos) << err.str();

  auto episodes = ReadEpisodeFile(dir + "/episodes.bin");
  ASSERT_TRUE(episodes.ok()) << episodes.status();
  EXPECT_FALSE(episodes->episodes.empty());
  auto best = ReadBestSequences(dir + "/episodes.bin.best.json");
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].autophase.size(), 56u);
  EXPECT_EQ((*best)[0].module_name, "bits.c");
}

TEST(SearchCommand, JsonReportsBothObjectivesAndGuidedUsesBestIn) {
  const std::string dir = testing::MakeTempDir();
  std::ostringstream first_out, err;
  ASSERT_EQ(RunSearchCommand(Flags(dir), first_out, err), 0) << err.str();

  SearchFlags guided = Flags(dir);
  guided.strategy = "guided";
  guided.json = true;
  guided.best_in = dir + "/episodes.bin.best.json";
  guided.best_out = dir + "/merged.json";
  std::ostringstream out;
  ASSERT_EQ(RunSearchCommand(guided, out, err), 0) << err.str();
  nlohmann::json summary = nlohmann::json::parse(out.str());
  const nlohmann::json& module = summary["modules"][0];
  EXPECT_LE(module["found"]["ir_count"].get<int64_t>(),
            module["O0"]["ir_count"].get<int64_t>());
  EXPECT_GT(module["found"]["text_size"].get<int64_t>(), 0);
  // alloc_size is the whole object: more than .text at every state.
  for (const char* state : {"O0", "Oz", "found"}) {
    EXPECT_GT(module[state]["alloc_size"].get<int64_t>(),
              module[state]["text_size"].get<int64_t>())
        << state;
  }
  const double alloc_oz_ratio =
      double(module["Oz"]["alloc_size"].get<int64_t>()) /
      module["found"]["alloc_size"].get<int64_t>();
  EXPECT_DOUBLE_EQ(module["alloc_oz_ratio"].get<double>(), alloc_oz_ratio);
  // One module: the geomean over modules is its own ratio.
  EXPECT_DOUBLE_EQ(summary["metrics"]["alloc_oz_ratio"].get<double>(),
                   alloc_oz_ratio);
  EXPECT_TRUE(summary["metrics"].contains("text_oz_ratio"));
  EXPECT_TRUE(summary["metrics"].contains("geomean_oz_ratio"));
  auto merged = ReadBestSequences(dir + "/merged.json");
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->size(), 1u);
}

// The episode without what depends on the clock.
std::string Timeless(v1::Episode e) {
  e.clear_seconds();
  e.clear_unix_time_ms();
  e.clear_host();
  return e.SerializeAsString();
}

TEST(SearchCommand, AnEvaluationBudgetMakesASeededSearchReproducible) {
  std::vector<std::string> runs;
  std::vector<nlohmann::json> summaries;
  for (int run = 0; run < 2; ++run) {
    const std::string dir = testing::MakeTempDir();
    SearchFlags flags = Flags(dir);
    flags.strategy = "greedy";
    flags.objective = "text_size";
    flags.max_evaluations = 30;
    flags.run_id = "repro";
    flags.json = true;
    std::ostringstream out, err;
    ASSERT_EQ(RunSearchCommand(flags, out, err), 0) << err.str();
    summaries.push_back(nlohmann::json::parse(out.str()));
    auto episodes = ReadEpisodeFile(dir + "/episodes.bin");
    ASSERT_TRUE(episodes.ok()) << episodes.status();
    std::string all;
    for (const v1::Episode& e : episodes->episodes) all += Timeless(e);
    runs.push_back(all);
  }
  EXPECT_FALSE(runs[0].empty());
  EXPECT_EQ(runs[0], runs[1]);
  const nlohmann::json& module = summaries[0]["modules"][0];
  EXPECT_LE(module["evaluations"].get<int64_t>(), 30);
  EXPECT_FALSE(module["time_limited"].get<bool>());
  EXPECT_EQ(summaries[0]["metrics"]["modules_time_limited"].get<int>(), 0);
  EXPECT_EQ(module["found"], summaries[1]["modules"][0]["found"]);
}

TEST(SearchCommand, MaxIrCountLeavesOutLargerCorpusModules) {
  const std::string dir = testing::MakeTempDir();
  // A corpus of two modules, one "large" by its manifest figure.
  const std::string bc = "compiler_driver/fixtures/bits.c";
  std::ofstream(dir + "/manifest.json")
      << R"({"modules": [{"name": "small", "bitcode_path": ")"
      << std::filesystem::absolute(bc).string()
      << R"(", "ir_count_o0": 100}, {"name": "large", "bitcode_path": ")"
      << std::filesystem::absolute(bc).string()
      << R"(", "ir_count_o0": 5000}]})";
  SearchFlags flags = Flags(dir);
  flags.inputs.clear();
  flags.corpus = dir;
  flags.max_ir_count = 1000;
  flags.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunSearchCommand(flags, out, err), 0) << err.str();
  nlohmann::json summary = nlohmann::json::parse(out.str());
  ASSERT_EQ(summary["modules"].size(), 1u);
  EXPECT_EQ(summary["modules"][0]["name"], "small");
  EXPECT_NE(err.str().find("1 modules over --max-ir-count 1000"),
            std::string::npos)
      << err.str();
}

// The review: a second run into the same episodes file dropped the first
// run's best sequences, and a run that measured nothing emptied the file.
TEST(SearchCommand, TheDefaultBestFileAccumulatesAndNothingMeasuredKeepsIt) {
  const std::string dir = testing::MakeTempDir();
  std::ostringstream out, err;
  ASSERT_EQ(RunSearchCommand(Flags(dir), out, err), 0) << err.str();
  SearchFlags second = Flags(dir);
  second.inputs = {"compiler_driver/fixtures/sorting.c"};
  ASSERT_EQ(RunSearchCommand(second, out, err), 0) << err.str();
  const std::string best_file = dir + "/episodes.bin.best.json";
  auto best = ReadBestSequences(best_file);
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->size(), 2u);  // bits.c's and sorting.c's
  std::stringstream before;
  before << std::ifstream(best_file).rdbuf();

  // Every corpus module over --max-ir-count: bad input, the file untouched.
  std::ofstream(dir + "/manifest.json")
      << R"({"modules": [{"name": "large", "bitcode_path": ")"
      << std::filesystem::absolute("compiler_driver/fixtures/bits.c").string()
      << R"(", "ir_count_o0": 5000}]})";
  SearchFlags none = Flags(dir);
  none.inputs.clear();
  none.corpus = dir;
  none.max_ir_count = 1000;
  std::ostringstream none_err;
  EXPECT_EQ(RunSearchCommand(none, out, none_err), 2);
  EXPECT_NE(none_err.str().find("no module left to search"), std::string::npos)
      << none_err.str();
  std::stringstream after;
  after << std::ifstream(best_file).rdbuf();
  EXPECT_EQ(after.str(), before.str());
}

// A miscompile blamed the pipeline greedy search finds on bits.c: with the
// buffer, search reports (and writes) the best sequence that is not blocked.
TEST(SearchCommand, ABlockedPipelineIsNeverReportedAsBest) {
  const std::string dir = testing::MakeTempDir();
  SearchFlags flags = Flags(dir);
  flags.strategy = "greedy";
  flags.max_evaluations = 300;
  flags.run_id = "blocked";
  flags.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(RunSearchCommand(flags, out, err), 0) << err.str();
  auto first = ReadBestSequences(dir + "/episodes.bin.best.json");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 1u);
  const v1::BestSequence found = (*first)[0].best;
  ASSERT_GT(found.actions_size(), 1);
  auto text = [&found](const google::protobuf::RepeatedField<int32_t>& a) {
    return PipelineText(found.action_space_version(),
                        std::vector<int>(a.begin(), a.end()));
  };
  const std::string pipeline = text(found.actions());
  ASSERT_FALSE(pipeline.empty());

  const std::string buffer = dir + "/buffer.db";
  {
    auto store = replay_buffer::OpenReplayStore(buffer);
    ASSERT_TRUE(store.ok()) << store.status();
    v1::Miscompile m;
    m.set_workload("bits");
    m.set_run("run[0]");
    m.set_what("stdout");
    m.set_verdict(replay_buffer::kVerdictMiscompile);
    v1::BlamedPipeline* blamed = m.add_blamed();
    blamed->set_module_hash(found.module_hash());
    blamed->set_pipeline(pipeline);
    ASSERT_TRUE((*store)->AddMiscompile(m).ok());
  }
  flags.buffer = buffer;
  flags.episodes_out = dir + "/again.bin";
  flags.best_in = dir + "/episodes.bin.best.json";  // holds the blocked one
  flags.best_out = dir + "/again.best.json";
  out.str("");
  err.str("");
  ASSERT_EQ(RunSearchCommand(flags, out, err), 0) << err.str();
  const nlohmann::json module = nlohmann::json::parse(out.str())["modules"][0];
  EXPECT_GT(module["blocked_skipped"].get<int64_t>(), 0);
  const std::vector<int32_t> again =
      module["found"]["actions"].get<std::vector<int32_t>>();
  EXPECT_FALSE(again.empty());
  EXPECT_NE(again, std::vector<int32_t>(found.actions().begin(),
                                        found.actions().end()));
  auto written = ReadBestSequences(flags.best_out);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->size(), 1u);
  EXPECT_NE(text((*written)[0].best.actions()), pipeline);
  EXPECT_EQ(std::vector<int32_t>((*written)[0].best.actions().begin(),
                                 (*written)[0].best.actions().end()),
            again);
  EXPECT_NE(err.str().find("1 (module, pipeline) pairs"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("dropped the best sequence"), std::string::npos)
      << err.str();

  // A buffer that is not there is bad input, named.
  flags.buffer = dir + "/missing.db";
  EXPECT_EQ(RunSearchCommand(flags, out, err), 2);
  EXPECT_NE(err.str().find("missing.db"), std::string::npos) << err.str();
}

TEST(SearchCommand, BadInputIsExitCode2WithAMessage) {
  const std::string dir = testing::MakeTempDir();
  std::ostringstream out, err;
  SearchFlags flags = Flags(dir);
  flags.strategy = "annealing";
  EXPECT_EQ(RunSearchCommand(flags, out, err), 2);
  EXPECT_NE(err.str().find("annealing"), std::string::npos);

  flags = Flags(dir);
  flags.inputs = {"no/such/file.c"};
  EXPECT_EQ(RunSearchCommand(flags, out, err), 2);
  EXPECT_NE(err.str().find("no/such/file.c"), std::string::npos);

  flags = Flags(dir);
  flags.episodes_out.clear();
  EXPECT_EQ(RunSearchCommand(flags, out, err), 2);

  flags = Flags(dir);
  flags.best_in = dir + "/missing.json";
  EXPECT_EQ(RunSearchCommand(flags, out, err), 2);
  EXPECT_NE(err.str().find("missing.json"), std::string::npos);

  // A program that does not compile: bad input, nothing claimed as
  // written, no empty episodes file left.
  std::ofstream(dir + "/bad.c") << "int main(void) { return x; }\n";
  flags = Flags(dir);
  flags.inputs = {dir + "/bad.c"};
  flags.episodes_out = dir + "/bad-episodes.bin";
  std::ostringstream bad_err;
  EXPECT_EQ(RunSearchCommand(flags, out, bad_err), 2) << bad_err.str();
  EXPECT_NE(bad_err.str().find("nothing written to"), std::string::npos)
      << bad_err.str();
  EXPECT_EQ(bad_err.str().find("best sequences in"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad-episodes.bin"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad-episodes.bin.best.json"));
}

}  // namespace
}  // namespace phaseloop::search
