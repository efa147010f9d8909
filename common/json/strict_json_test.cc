#include "common/json/strict_json.h"

#include "gtest/gtest.h"

namespace phaseloop::json_text {
namespace {

TEST(StrictJsonTest, AKeyGivenTwiceInOneObjectIsRefused) {
  EXPECT_TRUE(ParseStrictJson(R"({"a": 1, "b": {"a": 2}})").ok());
  std::optional<std::string> key;
  auto twice = ParseStrictJson(R"({"m": {"x": [1], "x": [5]}})", &key);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(key, "x");
  key.reset();
  EXPECT_FALSE(ParseStrictJson(R"({"": 1, "": 2})", &key).ok());
  EXPECT_EQ(key, "");  // an empty key is named too
  EXPECT_EQ(twice.status().message(), "'x': given twice; give each field once");
  auto bad = ParseStrictJson("{");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("not JSON: ", 0), 0u) << bad.status();
  EXPECT_FALSE(ParseStrictJson("1e400").ok());
}

}  // namespace
}  // namespace phaseloop::json_text
