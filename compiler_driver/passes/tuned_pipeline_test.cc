#include "compiler_driver/passes/tuned_pipeline.h"

#include <set>
#include <sstream>
#include <string>

#include "common/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phaseloop::passes {
namespace {

using ::testing::HasSubstr;

TEST(TunedPipelineTest, ParsesEveryKeyAndWritesItBackCanonically) {
  absl::StatusOr<TunedPipeline> tuned = ParseTunedParams(
      "O3;no-slp;inline-threshold=500;unroll;no-interleave;vectorize;"
      "merge-functions");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->level, "O3");
  EXPECT_EQ(tuned->inline_threshold, 500);
  EXPECT_EQ(tuned->unroll, true);
  EXPECT_EQ(tuned->interleave, false);
  EXPECT_EQ(tuned->vectorize, true);
  EXPECT_EQ(tuned->slp, false);
  EXPECT_EQ(tuned->merge_functions, true);
  EXPECT_EQ(TunedPipelineText(*tuned),
            "tuned<O3;inline-threshold=500;unroll;no-interleave;vectorize;"
            "no-slp;merge-functions>");
}

TEST(TunedPipelineTest, ALevelAloneChangesNothing) {
  absl::StatusOr<TunedPipeline> tuned = ParseTunedParams("Oz");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_FALSE(tuned->inline_threshold.has_value());
  EXPECT_FALSE(tuned->unroll.has_value());
  EXPECT_EQ(TunedPipelineText(*tuned), "tuned<Oz>");
  EXPECT_TRUE(ParseTunedParams("Oz;inline-threshold=-1000").ok());
}

TEST(TunedPipelineTest, BadParametersAreRefusedNamingThem) {
  struct Case {
    const char* params;
    const char* says;
  };
  for (const Case& c : {
           Case{"", "the level ''"},
           Case{"O0;unroll", "the level 'O0'"},
           Case{"O4", "the level 'O4'"},
           Case{"O3;inline-threshold=", "not ''"},
           Case{"O3;inline-threshold=5x", "not '5x'"},
           Case{"O3;inline-threshold=10001", "[-1000, 10000]"},
           Case{"O3;inline-threshold=1;inline-threshold=2", "given twice"},
           Case{"O3;unroll;no-unroll", "'unroll' is set twice"},
           Case{"O3;licm", "unknown tuning 'licm'"},
           Case{"O3;", "unknown tuning ''"},
       }) {
    absl::StatusOr<TunedPipeline> tuned = ParseTunedParams(c.params);
    ASSERT_FALSE(tuned.ok()) << c.params;
    EXPECT_THAT(std::string(tuned.status().message()), HasSubstr(c.says))
        << c.params;
    EXPECT_THAT(std::string(tuned.status().message()),
                HasSubstr(std::string("tuned<") + c.params + ">"));
  }
}

TEST(TunedPipelineTest, OnlyWholeTunedElementsAreParsedAsSuch) {
  EXPECT_FALSE(ParseTunedElement("default<O3>").has_value());
  EXPECT_FALSE(ParseTunedElement("tuned").has_value());
  EXPECT_FALSE(ParseTunedElement("tuned<O3").has_value());
  std::optional<absl::StatusOr<TunedPipeline>> element =
      ParseTunedElement("tuned<O2;no-unroll>");
  ASSERT_TRUE(element.has_value());
  ASSERT_TRUE(element->ok());
  EXPECT_EQ((*element)->unroll, false);
  element = ParseTunedElement("tuned<O2;bogus>");
  ASSERT_TRUE(element.has_value());
  EXPECT_FALSE(element->ok());
}

// The versioned file lists exactly the keys the parser takes.
TEST(TunedPipelineTest, TheTuningFileListsWhatTheParserAccepts) {
  const std::string text = phaseloop::testing::ReadFileOrEmpty(
      "compiler_driver/passes/llvm-16/tuning.tsv");
  ASSERT_FALSE(text.empty());
  std::istringstream lines(text);
  std::string line;
  std::set<std::string> keys;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    keys.insert(line.substr(0, line.find('\t')));
  }
  EXPECT_EQ(keys, (std::set<std::string>{"inline-threshold", "unroll",
                                         "interleave", "vectorize", "slp",
                                         "merge-functions"}));
  for (const std::string& key : keys) {
    const std::string params =
        key == "inline-threshold" ? "O3;inline-threshold=1" : "O3;" + key;
    EXPECT_TRUE(ParseTunedParams(params).ok()) << params;
    if (key != "inline-threshold") {
      EXPECT_TRUE(ParseTunedParams("O3;no-" + key).ok()) << key;
    }
  }
}

}  // namespace
}  // namespace phaseloop::passes
