#include "staging_harness/staging/interleaved_timing.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::staging {
namespace {

// Seconds drawn around `mean` with a multiplicative noise of ±`noise`.
class NoisyTimes {
 public:
  NoisyTimes(double baseline_s, double candidate_s, double noise)
      : baseline_s_(baseline_s), candidate_s_(candidate_s), noise_(noise) {}
  absl::StatusOr<PassSample> operator()(Side side) {
    sides.push_back(side);
    std::uniform_real_distribution<double> jitter(1 - noise_, 1 + noise_);
    PassSample sample;
    sample.wall_s =
        (side == Side::kBaseline ? baseline_s_ : candidate_s_) * jitter(rng_);
    sample.cpu_s = sample.wall_s * 0.99;
    sample.hardware_counted = true;
    sample.instructions = side == Side::kBaseline ? 1100 : 1000;
    return sample;
  }
  std::vector<Side> sides;

 private:
  double baseline_s_, candidate_s_, noise_;
  std::mt19937_64 rng_{7};
};

TEST(InterleavedTimingTest, StopsOnceTheIntervalIsNarrowAroundTheTrueSpeedup) {
  NoisyTimes times(1.05, 1.0, 0.005);
  TimingOptions options;
  int reports = 0, before_an_interval = 0;
  absl::StatusOr<TimingResult> result = TimeInterleaved(
      std::ref(times), options, [&](const TimingResult& so_far) {
        ++reports;
        // Every pair is reported, the first ones without an interval.
        EXPECT_EQ(so_far.baseline.size(), static_cast<size_t>(reports));
        if (so_far.baseline.size() < 10) ++before_an_interval;
      });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, "narrow");
  EXPECT_TRUE(result->narrow);
  EXPECT_EQ(result->baseline.size(), 10u);  // narrow at the first look
  EXPECT_NEAR(result->wall.median, 1.05, 0.01);
  EXPECT_LT(result->wall.low, 1.05);
  EXPECT_GT(result->wall.high, 1.05);
  EXPECT_GT(result->wall.low, 1.0);
  EXPECT_NEAR(result->cpu.median, 1.05, 0.01);
  EXPECT_NEAR(result->instructions_ratio, 1.1, 1e-9);
  EXPECT_LT(result->p_value, 0.05);
  EXPECT_EQ(reports, 10);
  EXPECT_EQ(before_an_interval, 9);
}

TEST(InterleavedTimingTest, ReportsEachSidesCpuShareAndTheMachineAround) {
  // The candidate's runs hold their CPU 80 % of their wall time: the share
  // is each side's median cpu_s / wall_s, and it is warned about.
  class Shared {
   public:
    absl::StatusOr<PassSample> operator()(Side side) {
      PassSample sample;
      sample.wall_s = 1.0 + 0.001 * (++calls_ % 3);
      sample.cpu_s = sample.wall_s * (side == Side::kBaseline ? 0.99 : 0.80);
      return sample;
    }

   private:
    int calls_ = 0;
  };
  Shared shared;
  TimingOptions options;
  options.min_pairs = 4;
  options.max_pairs = 4;
  absl::StatusOr<TimingResult> result =
      TimeInterleaved(std::ref(shared), options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NEAR(result->machine.baseline_cpu_share, 0.99, 1e-9);
  EXPECT_NEAR(result->machine.candidate_cpu_share, 0.80, 1e-9);
  // This test runs on Linux: the kernel's figures were read around it.
  EXPECT_TRUE(result->machine.available);
  EXPECT_FALSE(result->machine.cpus.empty());
  EXPECT_FALSE(result->all_pinned);  // no pass said it was pinned
  const std::vector<std::string> warnings =
      BusyMachineWarnings(result->machine, -1);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.back().find("candidate's runs held their CPU 80.0 %"),
            std::string::npos)
      << warnings.back();
}

TEST(InterleavedTimingTest, ShortOrUntickedPassesGiveNoCpuShare) {
  // 50 ms passes spend their wall time starting processes; a CPU time of 0
  // is below the kernel's tick: neither is a share of the CPU to warn of.
  class Short {
   public:
    absl::StatusOr<PassSample> operator()(Side side) {
      PassSample sample;
      sample.wall_s = side == Side::kBaseline ? 0.05 : 0.5 + 0.001 * (++n_ % 3);
      sample.cpu_s = side == Side::kBaseline ? 0.03 : 0;
      sample.pinned = true;
      return sample;
    }

   private:
    int n_ = 0;
  };
  Short times;
  TimingOptions options;
  options.min_pairs = 4;
  options.max_pairs = 4;
  absl::StatusOr<TimingResult> result =
      TimeInterleaved(std::ref(times), options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->machine.baseline_cpu_share, 0);
  EXPECT_EQ(result->machine.candidate_cpu_share, 0);
  EXPECT_TRUE(result->all_pinned);
  EXPECT_TRUE(BusyMachineWarnings(result->machine, -1).empty());
}

TEST(InterleavedTimingTest, ShortRunsAreNamedLongOnesNot) {
  TimingResult timing;
  for (double cpu_s : {0.05, 0.07, 0.06, 2.0}) {
    PassSample pass;
    pass.cpu_s = cpu_s;
    pass.wall_s = 4 * cpu_s;  // a busy machine: the wall time says nothing
    timing.baseline.push_back(pass);
  }
  // Median 65 ms: short for one command, and for two.
  const std::string one = ShortRunsWarning(timing, 1);
  EXPECT_NE(one.find("median 65.0 ms a pass of 1 command)"), std::string::npos)
      << one;
  EXPECT_NE(one.find("0.2-3 s"), std::string::npos) << one;
  EXPECT_NE(ShortRunsWarning(timing, 2).find("of 2 commands"),
            std::string::npos);
  for (PassSample& pass : timing.baseline) pass.cpu_s *= 2;  // 130 ms
  EXPECT_EQ(ShortRunsWarning(timing, 1), "");
  EXPECT_NE(ShortRunsWarning(timing, 2), "");          // 65 ms a command
  EXPECT_EQ(ShortRunsWarning(TimingResult(), 1), "");  // nothing timed
}

TEST(InterleavedTimingTest, AlternatesTheOrderOfEachPairAfterTheWarmUp) {
  NoisyTimes times(1.0, 1.0, 0.2);
  TimingOptions options;
  options.warmup_passes = 1;
  options.min_pairs = 4;
  options.max_pairs = 4;
  ASSERT_TRUE(TimeInterleaved(std::ref(times), options, nullptr).ok());
  using S = Side;
  const std::vector<Side> expected = {
      S::kBaseline, S::kCandidate,                               // warm-up
      S::kBaseline, S::kCandidate, S::kCandidate, S::kBaseline,  // pairs 0, 1
      S::kBaseline, S::kCandidate, S::kCandidate, S::kBaseline};
  EXPECT_EQ(times.sides, expected);
}

TEST(InterleavedTimingTest, NoisyRunsStopAtThePairLimitWithAWideInterval) {
  NoisyTimes times(1.0, 1.0, 0.3);
  TimingOptions options;
  options.min_pairs = 8;
  options.max_pairs = 8;
  absl::StatusOr<TimingResult> result =
      TimeInterleaved(std::ref(times), options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, "max_pairs");
  EXPECT_FALSE(result->narrow);
  EXPECT_EQ(result->baseline.size(), 8u);
  EXPECT_LE(result->wall.low, 1.0);
  EXPECT_GE(result->wall.high, 1.0);
}

TEST(InterleavedTimingTest, ABudgetSpentStopsAfterTheMinimumPairs) {
  NoisyTimes times(1.0, 1.0, 0.3);
  TimingOptions options;
  options.budget_s = 1e-9;
  absl::StatusOr<TimingResult> result =
      TimeInterleaved(std::ref(times), options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, "budget");
  EXPECT_EQ(result->baseline.size(), 10u);
}

TEST(InterleavedTimingTest, UncountedInstructionsGiveNoRatio) {
  NoisyTimes times(1.0, 1.0, 0.001);
  auto uncounted = [&](Side side) -> absl::StatusOr<PassSample> {
    absl::StatusOr<PassSample> sample = times(side);
    sample->hardware_counted = side == Side::kBaseline;
    return sample;
  };
  absl::StatusOr<TimingResult> result =
      TimeInterleaved(uncounted, TimingOptions{}, nullptr);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->instructions_ratio, 0);
}

TEST(InterleavedTimingTest, AFailedPassEndsTheTiming) {
  int calls = 0;
  auto failing = [&](Side) -> absl::StatusOr<PassSample> {
    if (++calls == 4) return absl::FailedPreconditionError("run[0] crashed");
    return PassSample{1, 1, false, 0, 0};
  };
  absl::StatusOr<TimingResult> result =
      TimeInterleaved(failing, TimingOptions{}, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(InterleavedTimingTest, RejectsOptionsThatCannotWork) {
  auto never = [](Side) -> absl::StatusOr<PassSample> {
    return PassSample{1, 1, false, 0, 0};
  };
  TimingOptions few;
  few.min_pairs = 2;
  EXPECT_EQ(TimeInterleaved(never, few, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  TimingOptions inverted;
  inverted.max_pairs = 3;
  EXPECT_EQ(TimeInterleaved(never, inverted, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  TimingOptions certain;
  certain.confidence = 1;
  EXPECT_EQ(TimeInterleaved(never, certain, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(InterleavedTimingTest, NeverStopsNarrowOnTooFewPairsForTheConfidence) {
  // Identical times: every interval is a point, but 3 to 7 pairs cannot
  // bound a median at 99 %, so the first narrow stop is at the 8th pair.
  auto same = [](Side) -> absl::StatusOr<PassSample> {
    return PassSample{1, 1, false, 0, 0};
  };
  TimingOptions options;
  options.min_pairs = 3;
  absl::StatusOr<TimingResult> result = TimeInterleaved(same, options, nullptr);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, "narrow");
  EXPECT_EQ(result->baseline.size(), 8u);
  EXPECT_GE(result->wall.coverage, 0.99);
}

}  // namespace
}  // namespace phaseloop::staging
