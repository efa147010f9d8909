#include "reward_engine/engine/sli_input.h"

#include <gtest/gtest.h>

#include "reward_engine/engine/engine_test_util.h"

namespace phaseloop::reward_engine {
namespace {

kafka::ConsumedMessage Message(const v1::SliWindow& w) {
  kafka::ConsumedMessage m;
  m.topic = "phaseloop.sli";
  m.partition = 2;
  m.offset = 17;
  m.key = w.service();  // kafka::SliKey
  m.value = w.SerializeAsString();
  return m;
}

std::string ReasonOf(const kafka::ConsumedMessage& m) {
  SloThresholds slos = {{"checkout", 0.25}};
  absl::StatusOr<SliInput> input = DecodeSliRecord(m, 60000, slos);
  return input.ok() ? "ok" : std::string(input.status().message());
}

TEST(SliInputTest, DecodesValidWindows) {
  v1::SliWindow w = testing::MakeSliWindow("checkout", "canary", "i1", 10000,
                                           10000, {0.01, 0.02, 0.03}, 1);
  SloThresholds slos = {{"checkout", 0.25}};
  absl::StatusOr<SliInput> input = DecodeSliRecord(Message(w), 60000, slos);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(input->partition, 2);
  EXPECT_EQ(input->offset, 17);
  EXPECT_EQ(input->instance, "i1");
  EXPECT_EQ(input->deployment_id, "dep-canary");
  EXPECT_EQ(input->sli_window_start_ms, 10000);
  EXPECT_EQ(input->sketch.count(), 3);
  EXPECT_EQ(input->sketch.max(), 0.03);
  EXPECT_EQ(input->error_count, 1);
}

TEST(SliInputTest, EveryBadRecordHasAClassifiedReason) {
  v1::SliWindow good =
      testing::MakeSliWindow("checkout", "canary", "i1", 10000, 10000, {0.01});
  kafka::ConsumedMessage m = Message(good);
  m.value = "\xff\xff not a proto";
  EXPECT_EQ(ReasonOf(m).substr(0, 10), "malformed:");

  v1::SliWindow bad = good;
  bad.set_count(5);  // the sketch holds 1
  EXPECT_EQ(ReasonOf(Message(bad)).substr(0, 15), "invalid: count:");

  m = Message(good);
  m.key = "checkout/baseline";  // the old service/group key
  EXPECT_EQ(ReasonOf(m).substr(0, 13), "key_mismatch:");

  v1::SliWindow odd =
      testing::MakeSliWindow("checkout", "canary", "i1", 0, 7000, {0.01});
  EXPECT_EQ(ReasonOf(Message(odd)).substr(0, 11), "misaligned:");

  v1::SliWindow stranger =
      testing::MakeSliWindow("search", "canary", "i1", 0, 10000, {0.01});
  EXPECT_EQ(ReasonOf(Message(stranger)).substr(0, 16), "unknown_service:");
}

// The review: one window dated a day ahead moved the partition's event
// time, so every later (correct) window was late, after restarts too.
TEST(SliInputTest, AWindowFromTheFutureIsADeadLetter) {
  v1::SliWindow w = testing::MakeSliWindow("checkout", "canary", "i1", 86400000,
                                           10000, {0.01}, 0);
  kafka::ConsumedMessage m = Message(w);
  m.timestamp_ms = 86400000 - kMaxFutureSkewMs;  // within the skew
  EXPECT_EQ(ReasonOf(m), "ok");
  m.timestamp_ms = 10000;  // produced a day before the window starts
  EXPECT_EQ(ReasonOf(m).rfind("future: ", 0), 0u) << ReasonOf(m);
  m.timestamp_ms = -1;  // no timestamp: nothing to compare with
  EXPECT_EQ(ReasonOf(m), "ok");
}

TEST(SliInputTest, StrictestSloIsTheRewardsThreshold) {
  slo::Slo a;
  a.service = "checkout";
  a.threshold_ms = 300;
  slo::Slo b = a;
  b.threshold_ms = 200;
  slo::Slo c = a;
  c.service = "search";
  c.threshold_ms = 50;
  SloThresholds t = ThresholdsOf({a, b, c});
  EXPECT_DOUBLE_EQ(t.at("checkout"), 0.2);
  EXPECT_DOUBLE_EQ(t.at("search"), 0.05);
}

}  // namespace
}  // namespace phaseloop::reward_engine
