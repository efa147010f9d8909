#include "reward_engine/sli/sli_window.h"

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>

namespace phaseloop::sli {
namespace {

v1::SliWindow GoodWindow() {
  v1::SliWindow w;
  w.set_service("checkout");
  w.set_group("canary");
  w.set_instance("pod-1");
  w.set_deployment_id("dep-7");
  w.set_policy_version("pv-3");
  w.set_window_start_ms(1700000000000);
  w.set_window_length_ms(10000);
  LatencySketch sketch;
  for (double v : {0.010, 0.012, 0.200}) EXPECT_TRUE(sketch.Add(v).ok());
  SetWindowSketch(sketch, &w);
  w.set_error_count(1);
  return w;
}

std::string FirstField(const v1::SliWindow& w) {
  const absl::Status status = ValidateSliWindow(w);
  if (status.ok()) return "ok";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  return message.substr(0, message.find(':'));
}

TEST(SliWindowTest, ValidWindowRoundTripsItsSketch) {
  const v1::SliWindow w = GoodWindow();
  EXPECT_EQ(FirstField(w), "ok");
  absl::StatusOr<LatencySketch> sketch = WindowSketch(w);
  ASSERT_TRUE(sketch.ok()) << sketch.status();
  EXPECT_EQ(sketch->count(), 3);
  EXPECT_EQ(sketch->min(), 0.010);
  EXPECT_EQ(sketch->max(), 0.200);
  EXPECT_NEAR(*sketch->Quantile(1), 0.200, 1e-12);
}

TEST(SliWindowTest, EachRuleNamesItsField) {
  v1::SliWindow w = GoodWindow();
  w.clear_service();
  EXPECT_EQ(FirstField(w), "service");
  w = GoodWindow();
  w.set_group("canary/2");
  EXPECT_EQ(FirstField(w), "group");
  w = GoodWindow();
  w.clear_policy_version();
  EXPECT_EQ(FirstField(w), "policy_version");
  w = GoodWindow();
  w.set_window_length_ms(0);
  EXPECT_EQ(FirstField(w), "window_length_ms");
  w = GoodWindow();
  w.set_window_start_ms(1700000000001);
  EXPECT_EQ(FirstField(w), "window_start_ms");
  w = GoodWindow();  // start + length overflowed the engine's event time
  w.set_window_start_ms(std::numeric_limits<int64_t>::max() / 60000 * 60000);
  w.set_window_length_ms(60000);
  EXPECT_EQ(FirstField(w), "window_start_ms");
  w = GoodWindow();
  w.set_error_count(4);
  EXPECT_EQ(FirstField(w), "error_count");
  w = GoodWindow();
  w.mutable_sketch()->set_relative_accuracy(0.01);
  EXPECT_EQ(FirstField(w), "sketch.relative_accuracy");
  w = GoodWindow();
  w.mutable_sketch()->set_zero_count(-1);
  EXPECT_EQ(FirstField(w), "sketch.zero_count");
  w = GoodWindow();
  w.set_count(2);
  w.set_error_count(0);
  EXPECT_EQ(FirstField(w), "count");
  w = GoodWindow();
  w.set_max_seconds(0.3);
  EXPECT_EQ(FirstField(w), "max_seconds");
}

TEST(SliWindowTest, TheFailuresSketchIsAShareOfTheSketch) {
  v1::SliWindow w = GoodWindow();  // 10, 12, 200 ms; one failure
  LatencySketch failures;
  ASSERT_TRUE(failures.Add(0.200).ok());
  *w.mutable_error_sketch() = failures.ToProto();
  EXPECT_EQ(FirstField(w), "ok");
  absl::StatusOr<WindowLatencies> sketches = WindowSketches(w);
  ASSERT_TRUE(sketches.ok()) << sketches.status();
  EXPECT_EQ(sketches->all.count(), 3);
  EXPECT_EQ(sketches->failures.count(), 1);
  EXPECT_EQ(sketches->failures.CountAtOrBelow(0.1), 0);
  // Without one, the failures' sketch is empty.
  sketches = WindowSketches(GoodWindow());
  ASSERT_TRUE(sketches.ok()) << sketches.status();
  EXPECT_TRUE(sketches->failures.empty());

  w.set_error_count(2);  // the sketch holds one
  EXPECT_EQ(FirstField(w), "error_sketch");
  // A failure slower than any request.
  failures = LatencySketch();
  ASSERT_TRUE(failures.Add(0.500).ok());
  w = GoodWindow();
  *w.mutable_error_sketch() = failures.ToProto();
  const absl::Status status = ValidateSliWindow(w);
  EXPECT_EQ(FirstField(w), "error_sketch");
  EXPECT_NE(status.message().find("1 failures above"), std::string::npos)
      << status;
  // Two failures at 200 ms, where one request is.
  failures = LatencySketch();
  ASSERT_TRUE(failures.Add(0.200, 2).ok());
  w = GoodWindow();
  w.set_error_count(2);
  *w.mutable_error_sketch() = failures.ToProto();
  EXPECT_EQ(FirstField(w), "error_sketch");
  // Failures spread below the requests above them pass the tail rule.
  failures = LatencySketch();
  ASSERT_TRUE(failures.Add(0.010).ok());
  ASSERT_TRUE(failures.Add(0.012).ok());
  w = GoodWindow();
  w.set_error_count(2);
  *w.mutable_error_sketch() = failures.ToProto();
  EXPECT_EQ(FirstField(w), "ok");
  w.mutable_error_sketch()->set_relative_accuracy(0.01);
  EXPECT_EQ(FirstField(w), "error_sketch.relative_accuracy");
  w = GoodWindow();
  w.mutable_error_sketch()->set_relative_accuracy(kDefaultRelativeAccuracy);
  w.mutable_error_sketch()->set_zero_count(-1);
  EXPECT_EQ(FirstField(w), "error_sketch.zero_count");
}

TEST(SliWindowTest, CorruptedBytesNeverCrash) {
  v1::SliWindow w = GoodWindow();
  LatencySketch sketch;
  for (int i = 1; i < 3000; ++i) ASSERT_TRUE(sketch.Add(i * 1e-4).ok());
  SetWindowSketch(sketch, &w);
  w.set_error_count(0);
  const std::string bytes = w.SerializeAsString();
  google::protobuf::LogSilencer quiet;  // invalid UTF-8 in corrupted strings
  std::mt19937_64 rng(1);
  int parsed = 0;
  int valid = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string corrupt = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      corrupt[rng() % corrupt.size()] = static_cast<char>(rng());
    }
    v1::SliWindow candidate;
    if (!candidate.ParseFromString(corrupt)) continue;
    ++parsed;
    absl::StatusOr<LatencySketch> result = WindowSketch(candidate);
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
      continue;
    }
    ++valid;
    EXPECT_TRUE(result->Quantile(0.95).ok());
  }
  EXPECT_GT(parsed, 1000);
  EXPECT_GT(parsed - valid, 500);  // most corruptions are caught
}

}  // namespace
}  // namespace phaseloop::sli
