#include "staging_harness/staging/machine_activity.h"

#include "gtest/gtest.h"

namespace phaseloop::staging {
namespace {

// Two readings of a two-CPU machine, 1000 ticks apart on each CPU.
constexpr char kBefore[] =
    "cpu  300 0 100 1500 100 0 0 0 0 0\n"
    "cpu0 100 0 50 800 50 0 0 0 0 0\n"
    "cpu1 200 0 50 700 50 0 0 0 0 0\n"
    "intr 12 0 0\n"
    "ctxt 99\n";
constexpr char kAfter[] =
    "cpu  1300 0 200 2300 100 0 0 100 0 0\n"
    "cpu0 200 0 50 1650 50 0 0 50 0 0\n"
    "cpu1 1100 0 150 650 50 0 0 50 0 0\n"
    "intr 15 0 0\n";

TEST(MachineActivityTest, ParsesTheCpuLinesOfProcStat) {
  absl::StatusOr<ProcStat> stat = ParseProcStat(kBefore);
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->all.busy, 400);
  EXPECT_EQ(stat->all.total, 2000);
  ASSERT_EQ(stat->cpus.size(), 2u);
  EXPECT_EQ(stat->all.cpu, -1);
  EXPECT_EQ(stat->cpus[1].cpu, 1);
  EXPECT_EQ(stat->cpus[1].busy, 250);
  EXPECT_EQ(stat->cpus[1].steal, 0);
}

TEST(MachineActivityTest, AnOldKernelWithoutStealCountsNone) {
  absl::StatusOr<ProcStat> stat = ParseProcStat("cpu 1 2 3 4 5 6 7\n");
  ASSERT_TRUE(stat.ok()) << stat.status();
  EXPECT_EQ(stat->all.busy, 1 + 2 + 3 + 6 + 7);
  EXPECT_EQ(stat->all.steal, 0);
  EXPECT_EQ(stat->all.total, 28);
}

TEST(MachineActivityTest, RefusesTextThatIsNotProcStatNamingTheLine) {
  absl::StatusOr<ProcStat> none = ParseProcStat("intr 1 2\n");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no \"cpu\" line"), std::string::npos);
  absl::StatusOr<ProcStat> bad = ParseProcStat("cpu 1 2 x 4 5 6 7 8\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("counter 3"), std::string::npos)
      << bad.status();
  EXPECT_FALSE(ParseProcStat("cpu 1 2 3\n").ok());
  EXPECT_FALSE(ParseProcStat("cpu 1 2 3 4 5 6 7\ncpux 1 2 3 4 5 6 7\n").ok());
}

TEST(MachineActivityTest, CpusAreMatchedByNumberNotPosition) {
  // CPU 0 went offline between the readings: its line is gone, and CPU 1's
  // figures are CPU 1's.
  const ProcStat before = *ParseProcStat(kBefore);
  const ProcStat after = *ParseProcStat(
      "cpu  1300 0 200 2300 100 0 0 100 0 0\n"
      "cpu1 1100 0 150 650 50 0 0 50 0 0\n");
  MachineActivity activity = ActivityBetween(before, after);
  ASSERT_EQ(activity.cpus.size(), 1u);
  EXPECT_EQ(activity.cpus[0].cpu, 1);
  EXPECT_NEAR(activity.cpus[0].busy, 1.0, 1e-12);
}

TEST(MachineActivityTest, BusyAndStealAreFractionsOfEachCpusTicks) {
  MachineActivity activity =
      ActivityBetween(*ParseProcStat(kBefore), *ParseProcStat(kAfter));
  EXPECT_TRUE(activity.available);
  ASSERT_EQ(activity.cpus.size(), 2u);
  EXPECT_EQ(activity.cpus[0].cpu, 0);
  EXPECT_NEAR(activity.cpus[0].busy, 100.0 / 1000, 1e-12);
  EXPECT_NEAR(activity.cpus[0].steal, 50.0 / 1000, 1e-12);
  EXPECT_NEAR(activity.cpus[1].busy, 1000.0 / 1000, 1e-12);
  EXPECT_NEAR(activity.steal, 100.0 / 2000, 1e-12);
}

TEST(MachineActivityTest, ParsesTheOneMinuteLoadAverage) {
  absl::StatusOr<double> load = ParseLoadAverage("1.75 1.76 1.84 3/166 23\n");
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_DOUBLE_EQ(*load, 1.75);
  EXPECT_FALSE(ParseLoadAverage("").ok());
}

TEST(MachineActivityTest, AQuietMachineHasNoWarnings) {
  MachineActivity quiet;
  quiet.available = true;
  quiet.cpus = {{0, 0.05, 0}, {1, 1.0, 0}};  // CPU 1 runs the timed passes
  quiet.baseline_cpu_share = 0.99;
  quiet.candidate_cpu_share = 0.98;
  EXPECT_TRUE(BusyMachineWarnings(quiet, 1).empty());
}

TEST(MachineActivityTest, WarnsOfStealASharedCpuAndABusyNeighbour) {
  MachineActivity busy =
      ActivityBetween(*ParseProcStat(kBefore), *ParseProcStat(kAfter));
  busy.baseline_cpu_share = 0.90;
  busy.candidate_cpu_share = 0.99;
  // Timed on CPU 0: CPU 1 was fully busy with other work.
  std::vector<std::string> warnings = BusyMachineWarnings(busy, 0);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("hypervisor took 5.0 % of CPU 0's time"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("baseline's runs held their CPU 90.0 %"),
            std::string::npos);
  EXPECT_NE(warnings[2].find("CPU 1 was 100 % busy"), std::string::npos);
  // Unpinned, the other CPUs' work may be the runs themselves: not warned;
  // steal is all CPUs'.
  warnings = BusyMachineWarnings(busy, -1);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("hypervisor took 5.0 % of the CPUs' time"),
            std::string::npos)
      << warnings[0];
  // Pinned, steal is the timed CPU's own (CPU 1: 50 of its 1000 ticks).
  EXPECT_NE(BusyMachineWarnings(busy, 1)[0].find("of CPU 1's time"),
            std::string::npos);
  // Unknown figures are never warned about.
  EXPECT_TRUE(BusyMachineWarnings(MachineActivity{}, 0).empty());
}

}  // namespace
}  // namespace phaseloop::staging
