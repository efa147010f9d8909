// `phaseloop survey` on a directory a user gives: programs that do not
// compile are listed as skipped (in the JSON too), and a directory where
// none compiles is bad input (exit 2), not an internal failure.
#include "staging_harness/search/survey_command.h"

#include <fstream>
#include <sstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace phaseloop::search {
namespace {

TEST(SurveyCommandTest, ProgramsThatDoNotCompileAreSkippedAndSaid) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/bad.c") << "int main(void) { return x; }\n";
  SurveyFlags flags;
  flags.corpus = dir;
  flags.budget_seconds = 0.2;
  flags.json = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunSurvey(flags, out, err), 2) << err.str();
  EXPECT_NE(err.str().find("no program"), std::string::npos) << err.str();

  std::ofstream(dir + "/good.c")
      << "int sum(int n) { int s = 0; for (int i = 0; i < n; ++i) s += i; "
         "return s; }\nint main(void) { return sum(10); }\n";
  std::ostringstream json_out, json_err;
  ASSERT_EQ(RunSurvey(flags, json_out, json_err), 0) << json_err.str();
  const nlohmann::json j = nlohmann::json::parse(json_out.str());
  ASSERT_EQ(j["programs"].size(), 1u);
  EXPECT_EQ(j["programs"][0]["program"], "good.c");
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["program"], "bad.c");
  EXPECT_FALSE(j["skipped"][0]["reason"].get<std::string>().empty());

  flags.json = false;
  std::ostringstream table, table_err;
  ASSERT_EQ(RunSurvey(flags, table, table_err), 0) << table_err.str();
  EXPECT_NE(table.str().find("1 program skipped:\n  bad.c: "),
            std::string::npos)
      << table.str();
}

}  // namespace
}  // namespace phaseloop::search
