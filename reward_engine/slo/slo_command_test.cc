// `phaseloop slo status` and `phaseloop slo check` as a user runs them: the
// real binary against budgets the real publisher put on the embedded
// cluster.
#include "reward_engine/slo/slo_command.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "common/kafka/test_util.h"
#include "common/kafka/topics.h"
#include "nlohmann/json.hpp"
#include "phaseloop/v1/sli.pb.h"
#include "reward_engine/slo/budget_publisher.h"
#include "reward_engine/slo/error_budget.h"
#include "reward_engine/slo/slo_config.h"

namespace phaseloop::slo {
namespace {

using std::chrono::milliseconds;

constexpr char kPhaseloop[] = "tools/phaseloop";
constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kNow = int64_t{1700000000000};

struct CommandRun {
  int code = -1;
  std::string out;  // stdout only
  std::string err;
};

// Runs argv with stdout and stderr kept apart (JSON must be alone on stdout).
CommandRun RunPhaseloop(const std::vector<std::string>& args) {
  const std::string dir = kafka::testing::MakeTempDir();
  const std::string out_path = dir + "/out", err_path = dir + "/err";
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv = {const_cast<char*>(kPhaseloop)};
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CommandRun run;
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(out_path), err(err_path);
  run.out.assign(std::istreambuf_iterator<char>(out), {});
  run.err.assign(std::istreambuf_iterator<char>(err), {});
  return run;
}

class SloStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::EmbeddedCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->CreateTopic(kafka::kBudgetTopic, 4, 1).ok());
    bootstrap_ = cluster_->bootstrap_servers();
  }

  // Publishes the statuses of the shipped demo SLO plus one for "search":
  // the canary burns (20 % bad in the last minutes), the baseline is clean.
  void PublishBudgets() {
    auto slos = LoadSloDirectory("configs/slo");
    ASSERT_TRUE(slos.ok()) << slos.status();
    Slo search = (*slos)[0];
    search.service = "search";
    search.name = "search-latency";
    slos->push_back(search);
    ErrorBudgetTracker tracker(*slos);
    auto window = [](const std::string& service, const std::string& group,
                     int64_t minutes_ago, int64_t total, int64_t good) {
      const int64_t start = kNow - minutes_ago * kMinute;
      return SloWindowObservation{service,         group, start,
                                  start + kMinute, total, good};
    };
    auto publisher = BudgetPublisher::Create(bootstrap_);
    ASSERT_TRUE(publisher.ok()) << publisher.status();
    // An older, healthy round first: `status` must show the latest.
    tracker.Observe(window("demo-service", "canary", 30, 1000, 1000));
    tracker.Observe(window("demo-service", "baseline", 30, 1000, 1000));
    tracker.Observe(window("search", "canary", 30, 500, 500));
    ASSERT_TRUE(
        (*publisher)->PublishAll(tracker.Status(kNow - 20 * kMinute)).ok());
    tracker.Observe(window("demo-service", "canary", 2, 1000, 800));
    tracker.Observe(window("demo-service", "baseline", 2, 1000, 999));
    ASSERT_TRUE((*publisher)->PublishAll(tracker.Status(kNow)).ok());
    ASSERT_TRUE((*publisher)->Flush(milliseconds(10000)).ok());
  }

  std::unique_ptr<kafka::EmbeddedCluster> cluster_;
  std::string bootstrap_;
};

TEST_F(SloStatusTest, PrintsTheLatestStatusPerSloAndGroup) {
  PublishBudgets();
  CommandRun json_run =
      RunPhaseloop({"slo", "status", "--kafka", bootstrap_, "--json"});
  ASSERT_EQ(json_run.code, 0) << json_run.err;
  const nlohmann::json doc = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(doc["topic"], "phaseloop.budget");
  EXPECT_EQ(doc["records"], 6);
  const auto& statuses = doc["statuses"];
  ASSERT_EQ(statuses.size(), 3u) << json_run.out;
  // Sorted: demo-service baseline, demo-service canary, search canary.
  const auto& baseline = statuses[0];
  const auto& canary = statuses[1];
  EXPECT_EQ(baseline["group"], "baseline");
  EXPECT_EQ(canary["service"], "demo-service");
  EXPECT_EQ(canary["slo_name"], "demo-service-latency");
  EXPECT_EQ(canary["group"], "canary");
  EXPECT_EQ(canary["as_of_ms"], std::to_string(kNow));  // proto3 JSON int64
  EXPECT_EQ(canary["total"], "2000");
  EXPECT_EQ(canary["bad"], "200");
  // 1 - 200 / (0.01 * 2000) = -9: spent.
  EXPECT_NEAR(canary["error_budget_remaining"].get<double>(), -9, 1e-9);
  EXPECT_EQ(canary["budget_exhausted"], true);
  // 5m burn (200/1000)/0.01 = 20; 1h burn (200/2000)/0.01 = 10.
  EXPECT_NEAR(canary["burn_rates"][0]["burn_rate"].get<double>(), 20, 1e-9);
  EXPECT_NEAR(canary["burn_rates"][2]["burn_rate"].get<double>(), 10, 1e-9);
  EXPECT_EQ(canary["alerts"][0]["name"], "page");
  EXPECT_EQ(canary["alerts"][0]["firing"], false);  // 1h is 10 ≤ 14.4
  // ticket-fast: 6h burn 10 and 30m burn 20, both > 6.
  EXPECT_EQ(canary["alerts"][1]["firing"], true);
  EXPECT_EQ(canary["alerts"][2]["firing"], true);
  // 1 bad of 2000: 1 - 1 / 20 = 0.95.
  EXPECT_NEAR(baseline["error_budget_remaining"].get<double>(), 0.95, 1e-9);
  EXPECT_EQ(statuses[2]["service"], "search");
  EXPECT_EQ(statuses[2]["as_of_ms"], std::to_string(kNow));

  CommandRun table = RunPhaseloop({"slo", "status", "--kafka", bootstrap_});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("SERVICE"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("BUDGET LEFT"), std::string::npos);
  EXPECT_NE(table.out.find("-900.0% (spent)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("95.0%"), std::string::npos);
  EXPECT_NE(table.out.find("ticket-fast,ticket-slow"), std::string::npos);
  EXPECT_NE(table.out.find("200/2000"), std::string::npos);

  CommandRun filtered = RunPhaseloop({"slo", "status", "--kafka", bootstrap_,
                                      "--service", "search", "--json"});
  ASSERT_EQ(filtered.code, 0) << filtered.err;
  const nlohmann::json only = nlohmann::json::parse(filtered.out);
  ASSERT_EQ(only["statuses"].size(), 1u);
  EXPECT_EQ(only["statuses"][0]["service"], "search");
}

TEST_F(SloStatusTest, EmptyTopicAndUnreachableCluster) {
  CommandRun empty = RunPhaseloop({"slo", "status", "--kafka", bootstrap_});
  EXPECT_EQ(empty.code, 0) << empty.err;
  EXPECT_NE(empty.out.find("no budget status on phaseloop.budget yet"),
            std::string::npos)
      << empty.out;

  CommandRun down = RunPhaseloop(
      {"slo", "status", "--kafka", "127.0.0.1:1", "--timeout-ms", "1500"});
  EXPECT_EQ(down.code, 1);
  EXPECT_NE(down.err.find("cannot reach the Kafka cluster at 127.0.0.1:1"),
            std::string::npos)
      << down.err;
}

// Protobuf parses an SLI window as a "status" of its service with nonsense
// elsewhere: a topic with only other records is the wrong --topic, said so,
// exit 2, not a table of garbage.
TEST_F(SloStatusTest, ATopicOfOtherRecordsIsTheWrongTopic) {
  ASSERT_TRUE(cluster_->CreateTopic(kafka::kSliTopic, 1, 1).ok());
  kafka::ProducerOptions options;
  options.bootstrap_servers = bootstrap_;
  auto producer = kafka::Producer::Create(options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  v1::SliWindow window;
  window.set_service("demo-service");
  window.set_group("canary");
  window.set_instance("i-1");
  window.set_deployment_id("dep-1");
  window.set_window_start_ms(kNow);
  window.set_window_length_ms(1000);
  window.set_count(100);
  ASSERT_TRUE((*producer)
                  ->Produce(kafka::kSliTopic, "demo-service/canary/i-1",
                            window.SerializeAsString())
                  .ok());
  ASSERT_TRUE((*producer)->Flush(milliseconds(10000)).ok());

  CommandRun run = RunPhaseloop(
      {"slo", "status", "--kafka", bootstrap_, "--topic", "phaseloop.sli"});
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("skipped 1 of 1 records of phaseloop.sli that are "
                         "not budget statuses"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("--topic phaseloop.budget"), std::string::npos)
      << run.err;

  // Beside real statuses the stray record is only skipped.
  PublishBudgets();
  ASSERT_TRUE(
      (*producer)
          ->Produce(kafka::kBudgetTopic, "x", window.SerializeAsString())
          .ok());
  ASSERT_TRUE((*producer)->Flush(milliseconds(10000)).ok());
  CommandRun mixed =
      RunPhaseloop({"slo", "status", "--kafka", bootstrap_, "--json"});
  ASSERT_EQ(mixed.code, 0) << mixed.err;
  EXPECT_EQ(nlohmann::json::parse(mixed.out)["statuses"].size(), 3u);
  EXPECT_NE(mixed.err.find("skipped 1 of 7 records"), std::string::npos)
      << mixed.err;
}

TEST(SloCommandTest, StatusNeedsKafka) {
  std::ostringstream out, err;
  SloStatusFlags flags;
  EXPECT_EQ(RunSloStatus(flags, out, err), 2);
  EXPECT_NE(err.str().find("--kafka BOOTSTRAP is required"), std::string::npos);
}

TEST(SloCommandTest, CheckPrintsWhatItUnderstood) {
  CommandRun run = RunPhaseloop({"slo", "check", "configs/slo"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("demo-service/demo-service-latency "
                         "(configs/slo/demo-service.yaml): requests good when "
                         "they succeed within 250 ms"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("target 99% over a rolling 30d; Occurrences: 1% of "
                         "requests may be bad"),
            std::string::npos)
      << run.out;

  run =
      RunPhaseloop({"slo", "check", "configs/slo/demo-service.yaml", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_EQ(doc[0]["threshold_ms"], 250);
  EXPECT_EQ(doc[0]["window"], "30d");

  const std::string dir = kafka::testing::MakeTempDir();
  std::ifstream demo("configs/slo/demo-service.yaml");
  std::string text(std::istreambuf_iterator<char>(demo), {});
  text.replace(text.find("target: 0.99"), 12, "target: 99");
  std::ofstream(dir + "/bad.yaml") << text;
  run = RunPhaseloop({"slo", "check", dir + "/bad.yaml"});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(
      run.err.find(dir + "/bad.yaml: document 1 (SLO "
                         "\"demo-service-latency\"): "
                         "spec.objectives[0].target: 99 is outside (0, 1)"),
      std::string::npos)
      << run.err;

  run = RunPhaseloop({"slo", "check"});
  EXPECT_EQ(run.code, 2);
  run = RunPhaseloop({"slo", "status", "--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("--kafka"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::slo
