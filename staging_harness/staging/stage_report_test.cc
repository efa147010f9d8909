#include "staging_harness/staging/stage_report.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace phaseloop::staging {
namespace {

StageResult MeasuredOnABusyMachine() {
  StageResult r;
  r.workload = "zopfli";
  r.split = "test";
  r.verdict = Verdict::kMeasured;
  r.units = r.optimized_units = 3;
  TimingResult t;
  for (int i = 0; i < 3; ++i) {
    t.baseline.push_back(PassSample{1.10, 1.0});
    t.candidate.push_back(PassSample{1.00, 0.99});
  }
  t.wall = {1.1, 1.09, 1.11, 3, 0.99, 0.99};
  t.machine.available = true;
  t.machine.cpus = {{0, 0.8, 0}, {1, 1.0, 0}};
  t.machine.timed_cpu = 1;
  t.machine.baseline_cpu_share = 1.0 / 1.1;
  t.machine.candidate_cpu_share = 0.99;
  r.timing = t;
  r.machine_warnings = BusyMachineWarnings(t.machine, 1);
  return r;
}

TEST(StageReportTest, ATableWarnsOfABusyMachineBesideItsFigure) {
  const std::string table = FormatStageTable({MeasuredOnABusyMachine()});
  EXPECT_NE(table.find("zopfli: busy machine: the baseline's runs held their "
                       "CPU 90.9 %"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("zopfli: busy machine: CPU 0 was 80 % busy"),
            std::string::npos)
      << table;
}

TEST(StageReportTest, JsonCarriesTheMachinesActivityAndWarnings) {
  nlohmann::json j =
      nlohmann::json::parse(FormatStageJson({MeasuredOnABusyMachine()}));
  const nlohmann::json& machine = j["workloads"][0]["machine"];
  EXPECT_EQ(machine["available"], true);
  EXPECT_EQ(machine["cpus"].size(), 2u);
  EXPECT_EQ(machine["timed_cpu"], 1);
  EXPECT_NEAR(machine["candidate_cpu_share"].get<double>(), 0.99, 1e-12);
  EXPECT_EQ(machine["warnings"].size(), 2u);
}

// Runs too short to time well are said in the table and the JSON.
TEST(StageReportTest, ShortRunsAreSaidBesideTheFigure) {
  StageResult r = MeasuredOnABusyMachine();
  EXPECT_EQ(
      nlohmann::json::parse(FormatStageJson({r}))["workloads"][0]["short_runs"],
      nullptr);
  EXPECT_EQ(FormatStageTable({r}).find("short"), std::string::npos);
  for (PassSample& pass : r.timing->baseline) pass.cpu_s = pass.wall_s = 0.02;
  r.short_runs = ShortRunsWarning(*r.timing, 1);
  ASSERT_FALSE(r.short_runs.empty());
  EXPECT_NE(FormatStageTable({r}).find("zopfli: " + r.short_runs),
            std::string::npos);
  EXPECT_EQ(
      nlohmann::json::parse(FormatStageJson({r}))["workloads"][0]["short_runs"],
      r.short_runs);
}

// A name longer than the column pushed its row out of line; instruction
// counts the kernel did not give read 0.0 in JSON where the table said n/a.
TEST(StageReportTest, LongNamesKeepTheColumnsAndMissingCountsAreNull) {
  StageResult r = MeasuredOnABusyMachine();
  r.workload = "flt-numeric-tight-and-long";
  StageResult other = MeasuredOnABusyMachine();
  const std::string table = FormatStageTable({r, other});
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = table.find('\n', at)) != std::string::npos;
       at = end + 1) {
    lines.push_back(table.substr(at, end - at));
  }
  ASSERT_GE(lines.size(), 3u);
  // The split column starts at the same place in the header and both rows.
  const size_t split = lines[0].find("split");
  EXPECT_EQ(lines[1].find(" test ") + 1, split) << table;
  EXPECT_EQ(lines[2].find(" test ") + 1, split) << table;
  nlohmann::json j = nlohmann::json::parse(FormatStageJson({r}));
  EXPECT_TRUE(j["workloads"][0]["instructions_ratio"].is_null()) << j.dump();
}

TEST(StageReportTest, AQuietRunHasNoBusyMachineNote) {
  StageResult r = MeasuredOnABusyMachine();
  r.timing->machine.cpus = {{0, 0.02, 0}, {1, 1.0, 0}};
  r.timing->machine.baseline_cpu_share = 0.99;
  r.machine_warnings = BusyMachineWarnings(r.timing->machine, 1);
  EXPECT_EQ(FormatStageTable({r}).find("busy machine"), std::string::npos);
}

// The review: with --max-pairs 5 the interval was the pairs' range (75 %
// coverage with 3 pairs) under a "99% interval" header, without a word.
TEST(StageReportTest, AnIntervalBelowTheConfidenceAskedIsSaid) {
  StageResult r = MeasuredOnABusyMachine();
  r.timing->wall.coverage = 0.75;
  const std::string table = FormatStageTable({r});
  EXPECT_NE(table.find("zopfli: with 3 pairs the interval is their range, a "
                       "75.0 % interval, not 99 %"),
            std::string::npos)
      << table;
  EXPECT_EQ(FormatStageTable({MeasuredOnABusyMachine()}).find("their range"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::staging
