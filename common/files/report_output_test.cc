#include "common/files/report_output.h"

#include <filesystem>
#include <fstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::files {
namespace {

TEST(ReportOutputTest, ReportsGoWhereTheyDestroyNothing) {
  const std::string dir = testing::MakeTempDir();
  const std::string state = dir + "/state";
  std::filesystem::create_directories(state + "/loops/l1");
  std::ofstream(state + "/loops/l1/state.json") << "{}";
  std::ofstream(state + "/buffer.db") << "x";
  EXPECT_TRUE(CheckReportOutput("--out", dir + "/r.html", state).ok());
  EXPECT_TRUE(
      CheckReportOutput("--out", state + "/loops/l1/report.html", state).ok());
  EXPECT_TRUE(
      CheckReportOutput("--json-out", state + "/loops/l1/r.json", state).ok());
  for (const std::string bad :
       {state + "/loops/l1/state.json", state + "/buffer.db",
        state + "/loops/l1/../l1/state.json", dir + "/missing/r.html", dir}) {
    absl::Status s = CheckReportOutput("--out", bad, state);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad << ": " << s;
    EXPECT_NE(s.message().find("--out " + bad), std::string::npos) << s;
  }
  // Through a link to the state directory.
  std::filesystem::create_directory_symlink(state, dir + "/link");
  EXPECT_FALSE(CheckReportOutput("--out", dir + "/link/buffer.db", state).ok());
  // Without a state directory, only the path itself is checked.
  EXPECT_TRUE(CheckReportOutput("--out", state + "/buffer.db", "").ok());
}

TEST(ReportOutputTest, TwoOutputsNeverTheSameFile) {
  const std::string dir = testing::MakeTempDir();
  EXPECT_TRUE(
      CheckReportOutputs(
          {{"--out", dir + "/r.html"}, {"--json-out", dir + "/r.json"}}, "")
          .ok());
  absl::Status s = CheckReportOutputs(
      {{"--out", dir + "/r.html"}, {"--json-out", dir + "/./r.html"}}, "");
  EXPECT_NE(s.message().find("--out and --json-out name the same file"),
            std::string::npos)
      << s;
  // The second's fault found before anything is written.
  s = CheckReportOutputs({{"--out", dir + "/r.html"}, {"--json-out", dir}}, "");
  EXPECT_NE(s.message().find("--json-out"), std::string::npos) << s;
}

}  // namespace
}  // namespace phaseloop::files
