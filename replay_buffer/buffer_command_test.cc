#include "replay_buffer/buffer_command.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/testing/test_util.h"
#include "nlohmann/json.hpp"
#include "replay_buffer/buffer_transfer.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

using test_records::MakeDecision;
using test_records::MakeEpisode;
using test_records::MakeModule;
using test_records::MakeReward;

void Fill(const std::string& path) {
  auto store = OpenReplayStore(path);
  ASSERT_TRUE(store.ok()) << store.status();
  WriteBatch b;
  b.modules = {MakeModule("m1", "train", 200), MakeModule("m2", "test", 200)};
  for (int i = 0; i < 600; ++i) {  // more than one import transaction
    b.episodes.push_back(MakeEpisode("e" + std::to_string(i),
                                     i % 2 ? "m1" : "m2", 1 + i % 7, i));
  }
  b.rewards = {MakeReward("r1", "staging", "e1", 0.5),
               MakeReward("r2", "canary", "e2", -0.25)};
  b.decisions = {MakeDecision("d1", "m1", "b1")};
  v1::Miscompile& m = b.miscompiles.emplace_back();
  m.set_workload("bzip2");
  m.set_run("run[0]");
  m.set_what("stdout");
  m.set_detail("line 3: expected '42', got '43'");
  m.set_verdict("miscompile");
  v1::BlamedPipeline* blamed = m.add_blamed();
  blamed->set_module_hash("m1");
  blamed->set_pipeline("function(gvn)");
  b.offsets = {{"ingest", "phaseloop.search.episodes", 0, 600}};
  ASSERT_TRUE((*store)->Write(b).ok());
  // Two equally good sequences for m3: the first written is the best known,
  // and an import must keep that choice although it scans "a-tie" first.
  for (const char* id : {"z-tie", "a-tie"}) {
    WriteBatch tie;
    tie.episodes = {MakeEpisode(id, "m3", 5, 77)};
    ASSERT_TRUE((*store)->Write(tie).ok());
  }
}

std::string Dump(const std::string& path) {
  auto store = OpenReplayStore(path);
  EXPECT_TRUE(store.ok()) << store.status();
  std::string all;
  EXPECT_TRUE((*store)
                  ->Scan(100,
                         [&](const WriteBatch& b) {
                           for (const auto& r : b.modules)
                             all += r.DebugString();
                           for (const auto& r : b.episodes)
                             all += r.DebugString();
                           for (const auto& r : b.best_sequences) {
                             all += r.DebugString();
                           }
                           for (const auto& r : b.rewards)
                             all += r.DebugString();
                           for (const auto& r : b.decisions) {
                             all += r.DebugString();
                           }
                           for (const auto& r : b.miscompiles) {
                             all += r.DebugString();
                           }
                           return absl::OkStatus();
                         })
                  .ok());
  return all;
}

TEST(BufferCommandTest, StatsCountsEverything) {
  const std::string buffer = testing::MakeTempDir() + "/buffer.db";
  Fill(buffer);
  std::ostringstream out, err;
  ASSERT_EQ(RunBufferStats(buffer, /*json=*/true, out, err), 0) << err.str();
  const std::string json = out.str();
  for (const char* expected :
       {"\"schema_version\": 5", "\"episodes\": 602", "\"steps\": 2405",
        "\"consumer_offsets\": 1",
        "{\"split\": \"train\", \"objective\": "
        "\"ir_count\", \"behaviour_policy\": \"random\", \"episodes\": 300",
        "{\"source\": \"canary\", \"rewards\": 1, \"mean\": -0.25, "
        "\"relative\": 0, \"relative_mean\": 0}",
        "{\"objective\": \"ir_count\", \"modules\": 2, \"better_than_oz\": 2",
        "{\"outcome\": \"optimized\", \"reason\": \"\", \"count\": 1}",
        "\"miscompiles\": [{\"verdict\": \"miscompile\", \"count\": 1}], "
        "\"blocked_pipelines\": 1"}) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n"
                                                      << json;
  }
  out.str("");
  ASSERT_EQ(RunBufferStats(buffer, /*json=*/false, out, err), 0);
  EXPECT_NE(out.str().find("best-known sequences vs clang-16 -Oz"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("staging"), std::string::npos);
}

TEST(BufferCommandTest, ExportImportRoundTripsAndImportIsIdempotent) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/a.db", copy = dir + "/copy.db",
                    target = dir + "/b.db";
  Fill(source);
  std::ostringstream out, err;
  ASSERT_EQ(RunBufferExport(source, copy, out, err), 0) << err.str();
  EXPECT_EQ(RunBufferExport(source, copy, out, err), 2);  // exists
  EXPECT_NE(err.str().find("exists"), std::string::npos) << err.str();

  ASSERT_EQ(RunBufferImport(target, copy, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("imported 611 records"), std::string::npos)
      << out.str();
  const std::string once = Dump(target);
  EXPECT_EQ(once, Dump(source));
  ASSERT_EQ(RunBufferImport(target, copy, out, err), 0) << err.str();
  EXPECT_EQ(Dump(target), once);
  auto store = OpenReplayStore(target);
  ASSERT_TRUE(store.ok());
  auto best = (*store)->ReadBestSequences("m3");
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ((*best)[0].episode_id(), "z-tie");
  // Offsets belong to the source's Kafka cluster: not imported.
  EXPECT_TRUE(
      (*store)->ReadOffsets("ingest", "phaseloop.search.episodes")->empty());
}

// The review: a buffer damaged on disk exported with exit 0 into a copy
// SQLite calls malformed, the very file the errors say to restore from.
TEST(BufferCommandTest, ADamagedBufferIsNotExported) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/a.db", copy = dir + "/copy.db";
  Fill(source);
  {
    auto store = OpenReplayStore(source);  // checkpoints the WAL on close
    ASSERT_TRUE(store.ok()) << store.status();
  }
  {
    std::fstream file(source, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(8192);
    const std::string junk(4096, '\x5a');
    file.write(junk.data(), junk.size());
  }
  std::ostringstream out, err;
  EXPECT_NE(RunBufferExport(source, copy, out, err), 0);
  EXPECT_NE(err.str().find("damaged"), std::string::npos) << err.str();
  EXPECT_FALSE(std::filesystem::exists(copy));
}

// An export that cannot be written (here a file-size limit stands in for a
// full disk) names the export and the likely cause, leaves no file behind
// and the buffer whole. It named only the source buffer.
TEST(BufferCommandTest, AnExportThatCannotBeWrittenNamesTheExport) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/a.db", copy = dir + "/copy.db";
  Fill(source);
  const std::string before = Dump(source);
  ASSERT_GT(std::filesystem::file_size(source), 128u << 10);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG
    // Above the source's shared-memory file (32 KiB), below the export.
    const struct rlimit limit = {64 << 10, 64 << 10};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::ostringstream out, err;
    const int code = RunBufferExport(source, copy, out, err);
    const std::string said = std::to_string(code) + "\n" + err.str();
    (void)!write(pipe_fds[1], said.data(), said.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    said.append(buffer, n);
  }
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_NE(said.substr(0, 2), "0\n") << said;
  EXPECT_NE(said.find("copying it to the export '" + copy + "'"),
            std::string::npos)
      << said;
  EXPECT_FALSE(std::filesystem::exists(copy));
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos)
        << entry.path();
  }
  EXPECT_EQ(Dump(source), before);
}

// A killed export left its temporary file (as big as the buffer) for good:
// the next export to the same path removes those of processes that are
// gone, and leaves a live one's.
TEST(BufferCommandTest, AnExportRemovesTheTemporariesOfDeadExports) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/a.db", copy = dir + "/copy.db";
  Fill(source);
  // Pids whose processes are gone: children, reaped.
  auto dead_pid = [] {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    return child;
  };
  const std::string dead = copy + ".tmp-" + std::to_string(dead_pid());
  const std::string live = copy + ".tmp-" + std::to_string(getppid());
  const std::string recent = copy + ".tmp-" + std::to_string(dead_pid());
  for (const std::string& path : {dead, dead + "-journal", live, recent}) {
    std::ofstream(path) << "left by an export";
  }
  // Left an hour ago (a fresh one may be another machine's live export).
  for (const std::string& path : {dead, dead + "-journal", live}) {
    std::filesystem::last_write_time(
        path,
        std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  }
  std::ostringstream out, err;
  ASSERT_EQ(RunBufferExport(source, copy, out, err), 0) << err.str();
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_FALSE(std::filesystem::exists(dead + "-journal"));
  EXPECT_TRUE(std::filesystem::exists(live));  // its process still runs
  EXPECT_TRUE(std::filesystem::exists(recent));
  EXPECT_TRUE(std::filesystem::exists(copy));
}

// A damaged snapshot was imported part way (a batch or two of its 256
// records), left a new buffer behind, and said a re-run would complete it,
// which it never could: it is refused whole, and nothing is written.
// A stop between transactions ends the import, saying how far it got.
TEST(BufferCommandTest, AStoppedImportSaysHowFarItGot) {
  const std::string dir = testing::MakeTempDir();
  Fill(dir + "/in.db");
  auto store = OpenReplayStore(dir + "/out.db");
  ASSERT_TRUE(store.ok()) << store.status();
  std::atomic<bool> stop{true};
  absl::StatusOr<int64_t> stopped =
      ImportBuffer(dir + "/in.db", **store, &stop);
  EXPECT_TRUE(absl::IsCancelled(stopped.status())) << stopped.status();
  EXPECT_NE(stopped.status().message().find("stopped after 0 records of"),
            std::string::npos)
      << stopped.status();
  stop = false;
  absl::StatusOr<int64_t> done = ImportBuffer(dir + "/in.db", **store, &stop);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_GT(*done, 600);
}

TEST(BufferCommandTest, ADamagedSnapshotIsNotImportedPartWay) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/a.db", copy = dir + "/copy.db",
                    target = dir + "/b.db";
  Fill(source);
  std::ostringstream out, err;
  ASSERT_EQ(RunBufferExport(source, copy, out, err), 0) << err.str();
  {
    std::fstream file(copy, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(8192);
    const std::string junk(4096, '\x5a');
    file.write(junk.data(), junk.size());
  }
  EXPECT_EQ(RunBufferImport(target, copy, out, err), 2) << err.str();
  EXPECT_NE(err.str().find("is damaged (sqlite quick_check"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("nothing was read from it"), std::string::npos)
      << err.str();
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST(BufferCommandTest, MiscompilesListsRecordsAndTheBlockList) {
  const std::string buffer = testing::MakeTempDir() + "/buffer.db";
  Fill(buffer);
  std::ostringstream out, err;
  ASSERT_EQ(RunBufferMiscompiles(buffer, /*json=*/false, out, err), 0)
      << err.str();
  for (const char* expected :
       {"1 miscompiles, 1 blocked (module, pipeline) pairs",
        "miscompile/bzip2///run[0] [miscompile]",
        "bzip2 run[0], stdout: line 3: expected '42', got '43'",
        "blames module m1: function(gvn)", "  m1  function(gvn)"}) {
    EXPECT_NE(out.str().find(expected), std::string::npos) << expected << "\n"
                                                           << out.str();
  }
  out.str("");
  ASSERT_EQ(RunBufferMiscompiles(buffer, /*json=*/true, out, err), 0);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["miscompiles"].size(), 1u);
  EXPECT_EQ(j["miscompiles"][0]["verdict"], "miscompile");
  EXPECT_EQ(j["miscompiles"][0]["blamed"][0]["pipeline"], "function(gvn)");
  ASSERT_EQ(j["blocked"].size(), 1u);
  EXPECT_EQ(j["blocked"][0]["module_hash"], "m1");
  EXPECT_EQ(RunBufferMiscompiles(buffer + ".missing", false, out, err), 2);
}

TEST(BufferCommandTest, BadFilesAreBadInputAndUntouched) {
  const std::string dir = testing::MakeTempDir();
  const std::string notes = dir + "/notes.txt", buffer = dir + "/buffer.db";
  std::ofstream(notes) << "hello\n";
  std::ostringstream out, err;
  EXPECT_EQ(RunBufferImport(buffer, notes, out, err), 2);
  EXPECT_NE(err.str().find(notes), std::string::npos) << err.str();
  EXPECT_EQ(testing::ReadFileOrEmpty(notes), "hello\n");
  EXPECT_EQ(access(buffer.c_str(), F_OK), -1);  // no empty buffer left
  EXPECT_EQ(RunBufferImport(buffer, dir + "/missing.db", out, err), 2);
  EXPECT_EQ(RunBufferStats(dir + "/missing.db", false, out, err), 2);
  EXPECT_EQ(RunBufferStats(notes, false, out, err), 2);
  EXPECT_EQ(RunBufferExport(notes, dir + "/x.db", out, err), 2);
  EXPECT_EQ(testing::ReadFileOrEmpty(notes), "hello\n");
  // "" was SQLite's private temporary database: imports reported done.
  Fill(dir + "/full.db");
  std::ostringstream empty_err;
  EXPECT_EQ(RunBufferImport("", dir + "/full.db", out, empty_err), 2);
  EXPECT_NE(empty_err.str().find("path is empty"), std::string::npos)
      << empty_err.str();
  EXPECT_EQ(RunBufferStats("", false, out, err), 2);
  // A SQLite database with nothing in it is no buffer to read, and is left
  // as it was.
  const std::string blank = dir + "/blank.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(blank.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(x); DROP TABLE t;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string blank_bytes = testing::ReadFileOrEmpty(blank);
  std::ostringstream blank_err;
  EXPECT_EQ(RunBufferStats(blank, false, out, blank_err), 2);
  EXPECT_NE(blank_err.str().find("empty SQLite database"), std::string::npos)
      << blank_err.str();
  EXPECT_EQ(testing::ReadFileOrEmpty(blank), blank_bytes);
}

// Reports only read: an exported snapshot keeps its bytes (a writable open
// switched it to WAL), and a buffer the user may not write can be read.
TEST(BufferCommandTest, StatsAndMiscompilesLeaveTheBufferAsItWas) {
  const std::string dir = testing::MakeTempDir();
  Fill(dir + "/buffer.db");
  std::ostringstream out, err;
  ASSERT_EQ(RunBufferExport(dir + "/buffer.db", dir + "/snap.db", out, err), 0)
      << err.str();
  const std::string snapshot = testing::ReadFileOrEmpty(dir + "/snap.db");
  ASSERT_EQ(RunBufferStats(dir + "/snap.db", true, out, err), 0) << err.str();
  ASSERT_EQ(RunBufferMiscompiles(dir + "/snap.db", true, out, err), 0)
      << err.str();
  EXPECT_EQ(testing::ReadFileOrEmpty(dir + "/snap.db"), snapshot);
  EXPECT_FALSE(std::filesystem::exists(dir + "/snap.db-wal"));
}

}  // namespace
}  // namespace phaseloop::replay_buffer
