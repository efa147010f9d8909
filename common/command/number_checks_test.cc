#include "common/command/number_checks.h"

#include <string>

#include "gtest/gtest.h"

namespace phaseloop::command {
namespace {

std::string Check(const CLI::Validator& check, std::string text) {
  return check(text);
}

TEST(NumberChecksTest, RefusalsSayWhatIsWanted) {
  EXPECT_EQ(Check(PositiveNumber(), "2.5"), "");
  EXPECT_EQ(Check(PositiveNumber(), "-1"),
            "expected a number above 0, got '-1'");
  EXPECT_EQ(Check(PositiveNumber(), "0"), "expected a number above 0, got '0'");
  EXPECT_EQ(Check(NonNegativeNumber(), "0"), "");
  EXPECT_EQ(Check(NonNegativeNumber(), "-0.5"),
            "expected a number of 0 or more, got '-0.5'");
  for (const char* bad : {"nan", "inf", "1e999", "", "3x", "abc"}) {
    EXPECT_NE(Check(PositiveNumber(), bad), "") << bad;
    EXPECT_NE(Check(NonNegativeNumber(), bad), "") << bad;
  }
}

// CLI11's Range let NaN through (stage --half-width nan ran).
TEST(NumberChecksTest, ARangeRefusesNanAndSaysTheRange) {
  const CLI::Validator confidence = NumberInRange(0.5, 0.9999);
  EXPECT_EQ(Check(confidence, "0.99"), "");
  EXPECT_EQ(Check(confidence, "0.5"), "");
  EXPECT_EQ(Check(confidence, "1"),
            "expected a number from 0.5 to 0.9999, got '1'");
  for (const char* bad : {"nan", "-nan", "inf", "", "0.9x"}) {
    EXPECT_NE(Check(confidence, bad), "") << bad;
  }
}

}  // namespace
}  // namespace phaseloop::command
