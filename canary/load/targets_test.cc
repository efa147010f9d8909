#include "canary/load/targets.h"

#include <string>
#include <thread>

#include "canary/load/payload.h"
#include "canary/load/seeded_random.h"
#include "gtest/gtest.h"

namespace phaseloop::canary::load {
namespace {

TEST(TargetsTest, ParsesNameAddressAndWeight) {
  auto t = ParseTarget("canary=127.0.0.1:8081:5");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->name, "canary");
  EXPECT_EQ(t->host, "127.0.0.1");
  EXPECT_EQ(t->port, 8081);
  EXPECT_EQ(t->weight, 5);
  auto plain = ParseTarget("baseline=localhost:80");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->weight, 1);
}

TEST(TargetsTest, RefusesMalformedTargetsNamingThem) {
  for (const char* text : {"127.0.0.1:80", "=h:80", "a=h", "a=h:0", "a=h:99999",
                           "a=h:80:x", "a=h:80:-1", "a=:80", "a=h:80:1:2"}) {
    auto t = ParseTarget(text);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_NE(t.status().message().find(text), std::string::npos) << t.status();
  }
}

TEST(TargetsTest, RefusesBadSets) {
  EXPECT_FALSE(TargetSet::Create({}).ok());
  EXPECT_FALSE(
      TargetSet::Create({{"a", "h", 1, 1}, {"a", "h", 2, 1}}).ok());  // twice
  EXPECT_FALSE(TargetSet::Create({{"a", "h", 1, 0}, {"b", "h", 2, 0}}).ok());
}

TEST(TargetsTest, ChoosesByCumulativeWeight) {
  auto set = TargetSet::Create(
      {{"a", "h", 1, 1}, {"zero", "h", 2, 0}, {"b", "h", 3, 3}});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->Choose(0), 0);
  EXPECT_EQ(set->Choose(0.2499), 0);
  EXPECT_EQ(set->Choose(0.25), 2);  // never the zero-weight target
  EXPECT_EQ(set->Choose(0.9999999), 2);
  EXPECT_EQ(set->IndexOf("b"), 2);
  EXPECT_EQ(set->IndexOf("c"), -1);
}

TEST(TargetsTest, SetWeightsIsAllOrNothing) {
  auto set =
      TargetSet::Create({{"baseline", "h", 1, 95}, {"canary", "h", 2, 5}});
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->SetWeights({{"baseline", 75}, {"canary", 25}}).ok());
  EXPECT_EQ(set->targets()[1].weight, 25);
  // Unknown name, negative weight, all zero: refused, weights unchanged.
  EXPECT_FALSE(set->SetWeights({{"baseline", 50}, {"nosuch", 50}}).ok());
  EXPECT_FALSE(set->SetWeights({{"canary", -1}}).ok());
  EXPECT_FALSE(set->SetWeights({{"baseline", 0}, {"canary", 0}}).ok());
  EXPECT_EQ(set->targets()[0].weight, 75);
  EXPECT_EQ(set->targets()[1].weight, 25);
}

// Choose and SetWeights from several threads at once (the controller
// shifts weights while the scheduler routes): every choice is a target
// whose weight was positive at some point.
TEST(TargetsTest, WeightsChangeUnderConcurrentChoices) {
  auto set = TargetSet::Create({{"a", "h", 1, 1}, {"b", "h", 2, 0}});
  ASSERT_TRUE(set.ok());
  std::thread shifter([&] {
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(set->SetWeights({{"a", i % 2 == 0 ? 0.0 : 1.0},
                                   {"b", i % 2 == 0 ? 1.0 : 0.0}})
                      .ok());
    }
  });
  SeededRandom random(3);
  for (int i = 0; i < 20000; ++i) {
    const int chosen = set->Choose(random.Uniform());
    ASSERT_TRUE(chosen == 0 || chosen == 1);
  }
  shifter.join();
}

TEST(PayloadTest, SameSeedSameBytesTextLike) {
  const std::string a = TextLikePayload(11, 5000);
  EXPECT_EQ(a.size(), 5000u);
  EXPECT_EQ(a, TextLikePayload(11, 5000));
  EXPECT_NE(a, TextLikePayload(12, 5000));
  // A prefix of a longer payload of the same seed.
  EXPECT_EQ(TextLikePayload(11, 100), a.substr(0, 100));
  for (char c : a) {
    ASSERT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ' ||
                c == '.' || c == '\n')
        << static_cast<int>(c);
  }
}

TEST(SeededRandomTest, DrawsAreInRangeAndRepeat) {
  SeededRandom a(5), b(5);
  for (int i = 0; i < 1000; ++i) {
    const double u = a.Uniform();
    ASSERT_GE(u, 0);
    ASSERT_LT(u, 1);
    ASSERT_EQ(u, b.Uniform());
    const int64_t n = a.Between(3, 7);
    ASSERT_GE(n, 3);
    ASSERT_LE(n, 7);
    ASSERT_EQ(n, b.Between(3, 7));
  }
}

}  // namespace
}  // namespace phaseloop::canary::load
