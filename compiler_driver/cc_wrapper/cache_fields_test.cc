#include "compiler_driver/cc_wrapper/cache_fields.h"

#include <gtest/gtest.h>

namespace phaseloop::cc_wrapper {
namespace {

TEST(CacheFieldsTest, ValuesOfAnyByteRoundTrip) {
  std::string text;
  const std::string odd("a\nb:c\0d", 7);
  AppendField(&text, "pipeline", odd);
  AppendField(&text, "value", "-42");
  AppendField(&text, "empty", "");
  size_t pos = 0;
  EXPECT_EQ(*ReadField(text, &pos, "pipeline"), odd);
  EXPECT_EQ(*ReadNumberField(text, &pos, "value"), -42);
  EXPECT_EQ(*ReadField(text, &pos, "empty"), "");
  EXPECT_EQ(pos, text.size());
}

TEST(CacheFieldsTest, AnotherFieldACutOneOrANonNumberIsDataLoss) {
  std::string text;
  AppendField(&text, "key", "0123456789");
  size_t pos = 0;
  absl::StatusOr<std::string> other = ReadField(text, &pos, "note");
  EXPECT_TRUE(absl::IsDataLoss(other.status()));
  EXPECT_NE(other.status().message().find("'note'"), std::string::npos);
  for (size_t cut = 0; cut < text.size(); ++cut) {
    pos = 0;
    EXPECT_TRUE(absl::IsDataLoss(
        ReadField(text.substr(0, cut), &pos, "key").status()))
        << cut;
  }
  pos = 0;
  EXPECT_TRUE(absl::IsDataLoss(ReadNumberField("n 3:1x2\n", &pos, "n").status()));
  pos = 0;
  EXPECT_TRUE(absl::IsDataLoss(
      ReadField("key 99999999999999999999:x\n", &pos, "key").status()));
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
