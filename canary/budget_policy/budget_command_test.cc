// `phaseloop canary budget` as a user runs it (its flags parsed in
// process) against budgets the reward engine's publisher (from the shipped
// demo SLO) put on the embedded cluster.
#include "canary/budget_policy/budget_command.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/test_util.h"
#include "nlohmann/json.hpp"
#include "reward_engine/slo/budget_publisher.h"
#include "reward_engine/slo/error_budget.h"
#include "reward_engine/slo/slo_config.h"

namespace phaseloop::canary {
namespace {

constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kNow = int64_t{1700000000000};

struct CommandRun {
  int code = -1;
  std::string out;  // stdout only
  std::string err;
};

// Runs `phaseloop ARGS` in process through the command's own flag parsing
// (the phaseloop binary reaches the policy store's server, which canary/
// may not), stdout and stderr kept apart (JSON must be alone on stdout).
CommandRun RunPhaseloop(const std::vector<std::string>& args) {
  CLI::App app("phaseloop");
  int exit_code = -1;
  AddBudgetCommand(app.add_subcommand("canary"), exit_code);
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  CommandRun run;
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
    run.code = exit_code;
  } catch (const CLI::ParseError& e) {
    err << e.what() << "\n";
    run.code = 2;
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

class CanaryBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = kafka::EmbeddedCluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ASSERT_TRUE(cluster_->CreateTopic(kafka::kBudgetTopic, 4, 1).ok());
    bootstrap_ = cluster_->bootstrap_servers();
  }

  // demo-service (99 % over 30 d): the baseline spent 60 % of its budget
  // over the last day (60 bad of 10000, no recent burn: cautious tier);
  // search: a healthy baseline and a canary burning fast now (page).
  void PublishBudgets() {
    auto slos = slo::LoadSloDirectory("configs/slo");
    ASSERT_TRUE(slos.ok()) << slos.status();
    slo::Slo search = (*slos)[0];
    search.service = "search";
    search.name = "search-latency";
    slos->push_back(search);
    slo::ErrorBudgetTracker tracker(*slos);
    auto window = [](const std::string& service, const std::string& group,
                     int64_t minutes_ago, int64_t total, int64_t good) {
      const int64_t start = kNow - minutes_ago * kMinute;
      return slo::SloWindowObservation{service,         group, start,
                                       start + kMinute, total, good};
    };
    tracker.Observe(window("demo-service", "baseline", 24 * 60, 10000, 9940));
    tracker.Observe(window("search", "baseline", 24 * 60, 10000, 10000));
    tracker.Observe(window("search", "canary", 2, 1000, 700));
    auto publisher = slo::BudgetPublisher::Create(bootstrap_);
    ASSERT_TRUE(publisher.ok()) << publisher.status();
    ASSERT_TRUE((*publisher)->PublishAll(tracker.Status(kNow)).ok());
    ASSERT_TRUE((*publisher)->Flush(std::chrono::milliseconds(10000)).ok());
  }

  std::unique_ptr<kafka::EmbeddedCluster> cluster_;
  std::string bootstrap_;
};

TEST_F(CanaryBudgetTest, ReadsTheBudgetTopicAndPrintsTheAllowance) {
  PublishBudgets();
  CommandRun run =
      RunPhaseloop({"canary", "budget", "--service", "demo-service", "--kafka",
                    bootstrap_, "--policy", "configs/error_budget_policy.yaml",
                    "--candidate-lower-bound", "1.01", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["allowed"], true) << run.out;
  EXPECT_EQ(doc["tier"], "cautious");
  EXPECT_DOUBLE_EQ(doc["max_canary_weight"].get<double>(), 0.10);
  EXPECT_EQ(doc["steps"], nlohmann::json({0.05, 0.10}));
  EXPECT_EQ(doc["max_concurrent"], 1);
  // 1 - 60 / (0.01 * 10000) = 0.4.
  EXPECT_NEAR(doc["budget_remaining"].get<double>(), 0.4, 1e-9);
  EXPECT_EQ(doc["budget_source"], "demo-service/demo-service-latency/baseline");
  EXPECT_EQ(doc["policy"], "configs/error_budget_policy.yaml");
  EXPECT_FALSE(doc["reasons"].empty());

  // The table, with one more experiment running than the tier allows.
  run = RunPhaseloop({"canary", "budget", "--service", "demo-service",
                      "--kafka", bootstrap_, "--candidate-lower-bound", "1.01",
                      "--running", "1"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.out,
                                "tier cautious, exploration NOT "
                                "ALLOWED"))
      << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "1 experiment(s) already running"))
      << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "demo-service-latency/baseline"))
      << run.out;

  // A fast burn on search's canary freezes search.
  run = RunPhaseloop({"canary", "budget", "--service", "search", "--kafka",
                      bootstrap_, "--candidate-lower-bound", "1.05", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json search = nlohmann::json::parse(run.out);
  EXPECT_EQ(search["allowed"], false);
  EXPECT_EQ(search["tier"], "frozen");
  EXPECT_EQ(search["steps"], nlohmann::json::array());
  EXPECT_TRUE(absl::StrContains(search["reasons"][0].get<std::string>(),
                                "page alert firing on "
                                "search/search-latency/canary"))
      << run.out;

  // A service with no budget yet: the conservative rule.
  run = RunPhaseloop({"canary", "budget", "--service", "new-service", "--kafka",
                      bootstrap_, "--candidate-lower-bound", "1.01", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["tier"], "cautious");
}

TEST_F(CanaryBudgetTest, BadInputIsNamedAndExitsTwo) {
  const std::string dir = kafka::testing::MakeTempDir();
  std::ofstream(dir + "/p.yaml") << "no_budget_data: maybe\n";
  CommandRun run =
      RunPhaseloop({"canary", "budget", "--service", "s", "--kafka", bootstrap_,
                    "--policy", dir + "/p.yaml"});
  EXPECT_EQ(run.code, 2);
  EXPECT_TRUE(absl::StrContains(run.err, dir + "/p.yaml: no_budget_data"))
      << run.err;
  // "nan" is what an omitted flag is inside: given, it was taken for none.
  for (const char* bound : {"-1", "nan"}) {
    run = RunPhaseloop({"canary", "budget", "--service", "s", "--kafka",
                        bootstrap_, "--candidate-lower-bound", bound});
    EXPECT_EQ(run.code, 2) << bound;
    EXPECT_TRUE(absl::StrContains(run.err, "--candidate-lower-bound"))
        << run.err;
  }
  run = RunPhaseloop({"canary", "budget", "--service", "s", "--kafka",
                      bootstrap_, "--running", "-2"});
  EXPECT_EQ(run.code, 2);
  EXPECT_TRUE(absl::StrContains(run.err, "--running")) << run.err;
  run = RunPhaseloop({"canary", "budget", "--service", "s", "--kafka", ""});
  EXPECT_EQ(run.code, 2);
  EXPECT_TRUE(absl::StrContains(run.err, "--kafka")) << run.err;
}

}  // namespace
}  // namespace phaseloop::canary
