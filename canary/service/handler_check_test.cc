#include "canary/service/handler_check.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

// handler.c over the system zlib, and test-only mutants of it
// (testdata/mutant_handler.c).
constexpr char kGood[] = "canary/service/libtest_handler.so";
constexpr char kCorrupt[] = "canary/service/libcorrupt_handler.so";
constexpr char kCrash[] = "canary/service/libcrash_handler.so";

TEST(HandlerCheckTest, TheSameHandlerAgreesWithItself) {
  auto report = CheckHandlersAgree(
      {{"baseline", kGood}, {"candidate", kGood}, {"O0", kGood}});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->Summary();
  EXPECT_EQ(report->requests, 48);
  EXPECT_TRUE(
      absl::StrContains(report->Summary(), "3 handlers agree on 48 requests"))
      << report->Summary();
}

TEST(HandlerCheckTest, CatchesACorruptedOutputNamingKindSizeAndByte) {
  auto report =
      CheckHandlersAgree({{"baseline", kGood}, {"candidate", kCorrupt}});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->ok());
  // deflate outputs over 1000 bytes: text of 65536 and 1 MiB (two seeds
  // each) and the random payloads; never the other kinds.
  for (const CheckFinding& finding : report->findings) {
    EXPECT_EQ(finding.handler, "candidate");
    EXPECT_EQ(finding.kind, "deflate") << finding.message;
    EXPECT_GE(finding.size, 4096u) << finding.message;
    EXPECT_GT(finding.first_differing_byte, 0) << finding.message;
  }
  const CheckFinding& first = report->findings[0];
  EXPECT_TRUE(absl::StrContains(
      first.message,
      "candidate differs from baseline on deflate text seed 1, "
      "65536 bytes: first differing output byte at offset "))
      << first.message;
  EXPECT_TRUE(absl::StrContains(report->Summary(), "findings"));
}

TEST(HandlerCheckTest, ACrashingCandidateIsAFindingNotACrash) {
  auto report =
      CheckHandlersAgree({{"baseline", kGood}, {"candidate", kCrash}});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->findings.size(), 1u) << report->Summary();
  EXPECT_TRUE(absl::StrContains(report->findings[0].message,
                                "did not finish the check requests: crashed"))
      << report->findings[0].message;
}

TEST(HandlerCheckTest, BadInputIsAnError) {
  EXPECT_FALSE(CheckHandlersAgree({{"baseline", kGood}}).ok());
  auto missing =
      CheckHandlersAgree({{"baseline", kGood}, {"candidate", "/nope.so"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "/nope.so"))
      << missing.status();
}

}  // namespace
}  // namespace phaseloop::canary
