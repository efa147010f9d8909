// Distributed search end to end: jobs submitted to the embedded Kafka
// cluster, two `phaseloop search-jobs work` processes in one consumer group,
// episodes ingested into a replay buffer.
#include "staging_harness/search/search_jobs.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_split.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/test_util.h"
#include "common/testing/test_util.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "replay_buffer/kafka_ingest.h"
#include "staging_harness/search/search_inputs.h"

namespace phaseloop::search {
namespace {

// Starts `argv` with stdout to `log`; returns the pid.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = freopen(log.c_str(), "w", stdout);
    (void)out;
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// The first `count` C fixtures, as search inputs.
std::vector<ModuleInput> FixtureSources(size_t count) {
  std::vector<ModuleInput> modules;
  for (const std::string& path : testing::FixturePaths()) {
    if (modules.size() < count && path.size() > 2 &&
        path.compare(path.size() - 2, 2, ".c") == 0) {
      modules.push_back({path, path, ""});
    }
  }
  return modules;
}

// A cluster with the jobs and episodes topics, `partitions` each.
std::unique_ptr<kafka::EmbeddedCluster> ClusterWithTopics(int partitions) {
  auto cluster = kafka::EmbeddedCluster::Start(1);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return nullptr;
  for (const char* topic :
       {"phaseloop.search.jobs", "phaseloop.search.episodes"}) {
    EXPECT_TRUE((*cluster)->CreateTopic(topic, partitions, 1).ok()) << topic;
  }
  return *std::move(cluster);
}

// ir_count jobs of `max_evaluations` actions each: counted work, so a loaded
// machine does the same jobs; the clock is only a safety net.
SubmitOptions IrCountJobs(const std::string& bootstrap,
                          int64_t max_evaluations) {
  SubmitOptions submit;
  submit.bootstrap_servers = bootstrap;
  submit.objective = Objective::kIrCount;
  submit.budget_seconds = 3600;
  submit.max_evaluations = max_evaluations;
  return submit;
}

TEST(SearchJobsTest, TwoWorkersShareTheJobsAndEveryEpisodeReachesTheBuffer) {
  auto cluster = ClusterWithTopics(4);
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  const std::vector<ModuleInput> modules = FixtureSources(4);
  const SubmitOptions submit = IrCountJobs(bootstrap, /*max_evaluations=*/40);
  auto ids = SubmitSearchJobs(modules, submit);
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_EQ(ids->size(), 4u);
  // Submitting the same work again names the same jobs.
  auto again = SubmitSearchJobs(modules, submit);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *ids);

  const std::string dir = testing::MakeTempDir();
  std::vector<pid_t> workers;
  for (int w = 0; w < 2; ++w) {
    workers.push_back(
        Spawn({"tools/phaseloop", "search-jobs", "work", "--kafka", bootstrap,
               "--worker-binary", "staging_harness/workers/session_worker",
               "--exit-when-idle-ms", "6000"},
              dir + "/worker" + std::to_string(w) + ".log"));
  }
  for (pid_t pid : workers) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::set<std::string> done;
  int lines = 0;
  for (int w = 0; w < 2; ++w) {
    std::string log =
        testing::ReadFileOrEmpty(dir + "/worker" + std::to_string(w) + ".log");
    size_t at = 0;
    while ((at = log.find("job ", at)) != std::string::npos) {
      done.insert(log.substr(at + 4, 20));
      ++lines;
      at += 4;
    }
  }
  // Eight jobs were produced (four, twice); each id done at least once.
  EXPECT_EQ(done, std::set<std::string>(ids->begin(), ids->end()));
  EXPECT_GE(lines, 4);

  auto store = replay_buffer::OpenReplayStore(dir + "/buffer.db");
  ASSERT_TRUE(store.ok());
  replay_buffer::IngestOptions ingest;
  ingest.bootstrap_servers = bootstrap;
  ingest.idle_exit = std::chrono::milliseconds(2500);
  ingest.consumer_config = kafka::testing::QuickGroupConfig();
  auto stats = replay_buffer::RunKafkaIngest(**store, ingest, nullptr, nullptr);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT(stats->episodes, 0);
  EXPECT_EQ(stats->malformed, 0);
  auto buffer = (*store)->Stats();
  ASSERT_TRUE(buffer.ok());
  int64_t stored = 0;
  for (const auto& group : buffer->episodes) stored += group.episodes;
  // A job worked twice overwrites its own episodes (ids derive from the job):
  // one random episode per module (40 actions, episodes of 40).
  EXPECT_EQ(stored, 4);
  EXPECT_LE(stored, stats->episodes);
}

// `phaseloop search-jobs submit` names the jobs the library does for the
// same work budget: --max-evaluations reaches the job (its id covers its
// options; without the flag it is another job).
TEST(SearchJobsTest, SubmitCommandCarriesTheWorkBudget) {
  auto cluster = ClusterWithTopics(1);
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  std::vector<ModuleInput> modules;  // named as the command names them
  for (const ModuleInput& fixture : FixtureSources(2)) {
    auto input = InputFile(fixture.path);
    ASSERT_TRUE(input.ok()) << input.status();
    modules.push_back(*input);
  }
  auto ids =
      SubmitSearchJobs(modules, IrCountJobs(bootstrap, /*max_evaluations=*/40));
  ASSERT_TRUE(ids.ok()) << ids.status();
  const std::string cli_dir = testing::MakeTempDir();
  auto submit_cli = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        "tools/phaseloop", "search-jobs", "submit",   "--kafka", bootstrap,
        "--objective",     "ir_count",    "--budget", "3600"};
    for (const ModuleInput& m : modules) {
      argv.push_back("--input");
      argv.push_back(m.path);
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    const std::string log = cli_dir + "/submit.log";
    const pid_t pid = Spawn(argv, log);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::vector<std::string> printed;
    for (absl::string_view line : absl::StrSplit(testing::ReadFileOrEmpty(log),
                                                 '\n', absl::SkipEmpty())) {
      printed.emplace_back(line.substr(0, line.find('\t')));
    }
    return printed;
  };
  EXPECT_EQ(submit_cli({"--max-evaluations", "40"}), *ids);
  EXPECT_NE(submit_cli({}), *ids);
}

// A budget of 0 or less (or NaN) searched nothing and reported "done"; one
// longer than a worker may go without polling Kafka was worked again
// forever. Refused before anything is produced.
TEST(SearchJobsTest, ABudgetOutsideItsRangeIsRefused) {
  for (double budget : {0.0, -3.0, std::nan(""), kMaxJobBudgetSeconds + 1}) {
    SubmitOptions options;
    options.bootstrap_servers = "127.0.0.1:1";  // never reached
    options.budget_seconds = budget;
    auto ids = SubmitSearchJobs(FixtureSources(1), options);
    EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument)
        << budget;
    EXPECT_NE(ids.status().message().find("a job's budget is in (0, "),
              std::string::npos)
        << ids.status();
  }
}

// A module too large for a Kafka message failed submit after the earlier
// jobs had gone out, without naming it: every job is checked first.
TEST(SearchJobsTest, AJobTooLargeForKafkaIsNamedBeforeAnyIsSent) {
  const std::string big = testing::MakeTempDir() + "/big.ll";
  {
    std::ofstream out(big);
    out << "@s = constant [1100000 x i8] c\"";
    for (int i = 0; i < 1100000; ++i) out << static_cast<char>('a' + i % 26);
    out << "\"\n";
  }
  std::vector<ModuleInput> modules = FixtureSources(1);
  auto input = InputFile(big);
  ASSERT_TRUE(input.ok()) << input.status();
  modules.push_back(*input);
  SubmitOptions options;
  options.bootstrap_servers = "127.0.0.1:1";  // never reached
  options.budget_seconds = 10;
  auto ids = SubmitSearchJobs(modules, options);
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ids.status().message().find("big.ll"), std::string::npos)
      << ids.status();
  EXPECT_NE(ids.status().message().find("nothing was submitted"),
            std::string::npos);
}

// Commits refused while the group rebalances (seen in CI when the second
// worker joined) must not stop a worker: the job's episodes are out, and a
// redelivered job rewrites the same episode ids.
TEST(SearchJobsTest, ACommitRefusedDuringARebalanceDoesNotStopTheWorker) {
  auto cluster = ClusterWithTopics(1);
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  auto ids = SubmitSearchJobs(FixtureSources(2),
                              IrCountJobs(bootstrap, /*max_evaluations=*/20));
  ASSERT_TRUE(ids.ok()) << ids.status();
  ASSERT_TRUE(cluster
                  ->PushRequestErrors(kafka::ApiKey::kOffsetCommit,
                                      {RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS,
                                       RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS})
                  .ok());
  WorkOptions work;
  work.bootstrap_servers = bootstrap;
  work.worker_binary = "staging_harness/workers/session_worker";
  work.idle_exit = std::chrono::milliseconds(3000);
  work.consumer_config = kafka::testing::QuickGroupConfig();
  std::ostringstream log;
  auto stats = RunSearchJobWorker(work, nullptr, log);
  ASSERT_TRUE(stats.ok()) << stats.status() << "\n" << log.str();
  EXPECT_EQ(
      std::set<std::string>(stats->jobs_done.begin(), stats->jobs_done.end()),
      std::set<std::string>(ids->begin(), ids->end()));
  EXPECT_NE(log.str().find("offset not committed"), std::string::npos)
      << log.str();
}

// SIGTERM during a job waited for the whole job (up to its 12 h budget; a
// pod's grace period then killed it, episodes in flight lost): the search
// ends at its next step, its episodes are delivered, and the job is left
// uncommitted for the next worker, which works it whole.
TEST(SearchJobsTest, AStopSignalEndsAJobEarlyAndLeavesItForTheNextWorker) {
  auto cluster = ClusterWithTopics(1);
  ASSERT_NE(cluster, nullptr);
  const std::string bootstrap = cluster->bootstrap_servers();
  // A job the clock ends, 6 s in: the signal comes long before (its first
  // episode is out within a second), and the next worker runs it whole.
  SubmitOptions six_seconds = IrCountJobs(bootstrap, /*max_evaluations=*/0);
  six_seconds.budget_seconds = 6;
  auto ids = SubmitSearchJobs(FixtureSources(1), six_seconds);
  ASSERT_TRUE(ids.ok()) << ids.status();
  WorkOptions work;
  work.bootstrap_servers = bootstrap;
  work.worker_binary = "staging_harness/workers/session_worker";
  work.idle_exit = std::chrono::milliseconds(3000);
  work.consumer_config = kafka::testing::QuickGroupConfig();
  work.spool_dir = testing::MakeTempDir();
  std::atomic<bool> stop{false};
  // The signal, once the job's first episodes reached Kafka: mid-job.
  std::thread signal([&] {
    while (kafka::testing::Watermarks(bootstrap, "phaseloop.search.episodes", 0)
               .second < 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop = true;
  });
  std::ostringstream first_log;
  auto first = RunSearchJobWorker(work, &stop, first_log);
  signal.join();
  ASSERT_TRUE(first.ok()) << first.status() << "\n" << first_log.str();
  EXPECT_TRUE(first->jobs_done.empty()) << first_log.str();
  EXPECT_EQ(first->jobs_stopped, *ids) << first_log.str();
  EXPECT_NE(first_log.str().find("stopped by a signal"), std::string::npos)
      << first_log.str();
  const int64_t stopped_at =
      kafka::testing::Watermarks(bootstrap, "phaseloop.search.episodes", 0)
          .second;
  EXPECT_GT(stopped_at, 0);

  std::ostringstream next_log;
  auto next = RunSearchJobWorker(work, nullptr, next_log);
  ASSERT_TRUE(next.ok()) << next.status() << "\n" << next_log.str();
  EXPECT_EQ(next->jobs_done, *ids) << next_log.str();
  EXPECT_TRUE(next->jobs_stopped.empty());
  // The first worker's share was a part of the job, the next one's all of
  // it.
  EXPECT_LT(first->episodes, next->episodes);
}

// A worker told to exit when idle, pointed at an address where no broker
// answers, waited for ever (idle time counted only with partitions): it
// now fails after the grace, naming the address.
TEST(SearchJobsTest, AnIdleWorkerOfAnUnreachableClusterFails) {
  WorkOptions work;
  work.bootstrap_servers = "127.0.0.1:1";
  work.worker_binary = "staging_harness/workers/session_worker";
  work.idle_exit = std::chrono::milliseconds(200);
  work.unassigned_grace = std::chrono::milliseconds(1500);
  std::ostringstream log;
  auto stats = RunSearchJobWorker(work, nullptr, log);
  ASSERT_FALSE(stats.ok()) << log.str();
  EXPECT_TRUE(absl::IsUnavailable(stats.status())) << stats.status();
  EXPECT_NE(stats.status().message().find(
                "no Kafka broker at 127.0.0.1:1 answered the worker"),
            std::string::npos)
      << stats.status();
}

}  // namespace
}  // namespace phaseloop::search
