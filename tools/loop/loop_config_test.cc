#include "tools/loop/loop_config.h"

#include <fstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::loop {
namespace {

std::string Write(const std::string& text) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/loop.yaml") << text;
  return dir + "/loop.yaml";
}

TEST(LoopConfigTest, TheShippedConfigLoads) {
  auto config = LoadLoopConfig("configs/loop/demo.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->service, "configs/loop/../services/demo.yaml");
  EXPECT_EQ(config->learner,
            "configs/loop/../learner/speed_candidate_cql.yaml");
  EXPECT_EQ(config->iterations, 3);
  EXPECT_EQ(config->explore_workload, "zlib");
  EXPECT_EQ(config->stage_workload, "zlib");
  EXPECT_EQ(config->gate_split, "test");
  EXPECT_EQ(config->gate_workloads, std::vector<std::string>{"bc"});
  EXPECT_GT(config->explore_budget_s, 0);
  EXPECT_TRUE(config->gate_timed);
  EXPECT_TRUE(config->explore_in_canary);
  EXPECT_EQ(config->explore_runoff_contenders, 2);
  EXPECT_EQ(config->explore_runoff_budget_s, 20);
}

TEST(LoopConfigTest, TheRunoffCanBeSizedOrTurnedOff) {
  auto config = LoadLoopConfig(
      Write("service: s.yaml\nlearner: l.yaml\n"
            "explore: {workload: w, runoff_contenders: 0, runoff_budget_s: "
            "7}\nstage: {workload: w}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->explore_runoff_contenders, 0);
  EXPECT_EQ(config->explore_runoff_budget_s, 7);
}

TEST(LoopConfigTest, ExplorationInCanariesCanBeTurnedOff) {
  auto config = LoadLoopConfig(Write(
      "service: s.yaml\nlearner: l.yaml\n"
      "explore: {workload: w, in_canary: false}\nstage: {workload: w}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->explore_in_canary);
}

TEST(LoopConfigTest, AnUntimedGateIsSaidSo) {
  auto config = LoadLoopConfig(
      Write("service: s.yaml\nlearner: l.yaml\nexplore: {workload: w}\n"
            "stage: {workload: w}\ngate: {timed: false}\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->gate_timed);
}

TEST(LoopConfigTest, BadFieldsAreNamed) {
  const std::string base =
      "service: s.yaml\nlearner: l.yaml\nexplore: {workload: w}\n"
      "stage: {workload: w}\n";
  EXPECT_TRUE(LoadLoopConfig(Write(base)).ok());
  struct Case {
    std::string text, expected;
  } cases[] = {
      {base + "iterations: 0\n", "iterations: 0 is outside [1, 1000]"},
      {base + "typo: 1\n", "typo: unknown field"},
      {"learner: l.yaml\nexplore: {workload: w}\nstage: {workload: w}\n",
       "service: required"},
      {"service: s.yaml\nlearner: l.yaml\nstage: {workload: w}\n",
       "explore: required"},
      {base + "gate: {workloads: bc}\n", "gate.workloads: expected a list"},
      {base + "gate: {timed: no}\n", "gate.timed: expected true or false"},
      {base + "gate: {split: nope}\n", "gate.split: "},
      {"service: s.yaml\nlearner: l.yaml\nexplore: {workload: w, in_canary: "
       "1}\nstage: {workload: w}\n",
       "explore.in_canary: expected true or false"},
      {"service: s.yaml\nlearner: l.yaml\nexplore: {workload: w, budget_s: "
       "-1}\nstage: {workload: w}\n",
       "explore.budget_s: -1 is outside"},
      {"service: s.yaml\nlearner: l.yaml\nexplore: {workload: w, "
       "runoff_contenders: 17}\nstage: {workload: w}\n",
       "explore.runoff_contenders: 17 is outside [0, 16]"},
  };
  for (const Case& c : cases) {
    const std::string path = Write(c.text);
    auto config = LoadLoopConfig(path);
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_NE(config.status().message().find(c.expected), std::string::npos)
        << config.status();
    EXPECT_NE(config.status().message().find(path), std::string::npos);
  }
  EXPECT_EQ(LoadLoopConfig("/nonexistent.yaml").status().code(),
            absl::StatusCode::kNotFound);
}

// The publish gate's refusals (a workload of another split, a workload
// file that does not load), found at the start, not at the train stage
// after explore had spent its budget.
TEST(LoopConfigTest, TheGatesWorkloadsAreCheckedUpFront) {
  auto config = LoadLoopConfig("configs/loop/demo.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(CheckGateWorkloads(*config, "demo.yaml").ok());
  LoopConfig other_split = *config;
  other_split.gate_workloads = {"zlib"};
  EXPECT_NE(CheckGateWorkloads(other_split, "demo.yaml")
                .message()
                .find("gate.workloads: 'zlib' is a train workload; the gate "
                      "stages split 'test'"),
            std::string::npos)
      << CheckGateWorkloads(other_split, "demo.yaml");
  LoopConfig unknown = *config;
  unknown.gate_workloads = {"nosuch"};
  EXPECT_NE(CheckGateWorkloads(unknown, "demo.yaml")
                .message()
                .find("no workload named 'nosuch'"),
            std::string::npos);
  LoopConfig broken = *config;
  broken.workloads_dir = testing::MakeTempDir();
  std::ofstream(broken.workloads_dir + "/bad.yaml") << "name: [\n";
  EXPECT_NE(CheckGateWorkloads(broken, "demo.yaml")
                .message()
                .find("the publish gate loads every workload file here"),
            std::string::npos)
      << CheckGateWorkloads(broken, "demo.yaml");
}

}  // namespace
}  // namespace phaseloop::loop
