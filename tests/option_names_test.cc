// Issue #15, "One name per idea across commands": the real `phaseloop`
// binary takes the shared names (--jobs, --exit-when-idle-ms, --group) and,
// for one release, the old spellings as deprecated aliases that set the same
// value. Each row gives a value the command itself refuses, so the refusal
// shows the value reached the command's flags under either name.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop {
namespace {

constexpr char kPhaseloop[] = "tools/phaseloop";

struct Renamed {
  std::vector<std::string> command;   // words after `phaseloop`
  std::vector<std::string> required;  // other arguments it needs
  std::string name;                   // the shared name
  std::string old_name;               // its deprecated alias
  std::string refused;                // a value the command refuses
  std::string message;                // what it says about that value
};

const std::vector<Renamed>& AllRenamed() {
  static const auto* renamed = new std::vector<Renamed>{
      {{"eval"},
       {"--policy", "baseline", "--corpus", "/nonexistent"},
       "--jobs",
       "--threads",
       "0",
       "--jobs >= 1"},
      {{"candidates", "mine"},
       {"--corpus", "/nonexistent", "--out", "/nonexistent/c.json"},
       "--jobs",
       "--threads",
       "0",
       "--jobs must be >= 1"},
      {{"search"},
       {"--input", "/nonexistent.c", "--episodes-out", "/nonexistent/e"},
       "--jobs",
       "--workers",
       "-1",
       "--jobs"},
      {{"search-jobs", "work"},
       {"--kafka", "127.0.0.1:1"},
       "--exit-when-idle-ms",
       "--idle-exit-ms",
       "-1",
       "--exit-when-idle-ms must be >= 0"},
      {{"buffer", "ingest"},
       {"--kafka", "127.0.0.1:1", "--buffer", "/nonexistent/b.db"},
       "--exit-when-idle-ms",
       "--idle-exit-ms",
       "-1",
       "--exit-when-idle-ms must be >= 0"},
      {{"rewards", "run"},
       {"--kafka", "127.0.0.1:1", "--buffer", "/nonexistent/b.db"},
       "--group",
       "--group-id",
       "",
       "--group must name a consumer group"},
  };
  return *renamed;
}

std::string Words(const Renamed& r) { return absl::StrJoin(r.command, " "); }

int RunWith(const Renamed& r, const std::string& option, std::string* output) {
  std::vector<std::string> argv = {kPhaseloop};
  argv.insert(argv.end(), r.command.begin(), r.command.end());
  argv.insert(argv.end(), r.required.begin(), r.required.end());
  if (r.refused.empty()) {  // `--group=` would be a missing value
    argv.push_back(option);
    argv.push_back("");
  } else {
    argv.push_back(option + "=" + r.refused);
  }
  return testing::RunCommand(argv, output);
}

TEST(OptionNamesTest, TheSharedNameReachesTheCommand) {
  for (const Renamed& r : AllRenamed()) {
    std::string output;
    EXPECT_EQ(RunWith(r, r.name, &output), 2) << Words(r) << "\n" << output;
    EXPECT_TRUE(absl::StrContains(output, r.message))
        << Words(r) << " " << r.name << "\n"
        << output;
    EXPECT_FALSE(absl::StrContains(output, "deprecated")) << output;
  }
}

TEST(OptionNamesTest, TheOldNameSetsTheSameValueAndSaysItIsDeprecated) {
  for (const Renamed& r : AllRenamed()) {
    std::string output;
    EXPECT_EQ(RunWith(r, r.old_name, &output), 2) << Words(r) << "\n" << output;
    EXPECT_TRUE(absl::StrContains(output, r.message))
        << Words(r) << " " << r.old_name << "\n"
        << output;
    EXPECT_TRUE(absl::StrContains(
        output, absl::StrCat("phaseloop ", Words(r), ": ", r.old_name,
                             " is deprecated; use ", r.name, "\n")))
        << output;
  }
}

TEST(OptionNamesTest, HelpShowsTheSharedNameAndItsAlias) {
  for (const Renamed& r : AllRenamed()) {
    std::vector<std::string> argv = {kPhaseloop};
    argv.insert(argv.end(), r.command.begin(), r.command.end());
    argv.push_back("--help");
    std::string help;
    ASSERT_EQ(testing::RunCommand(argv, &help), 0) << Words(r) << "\n" << help;
    EXPECT_TRUE(absl::StrContains(help, "  " + r.name + " ")) << help;
    EXPECT_TRUE(absl::StrContains(
        help, absl::StrCat("(alias: ", r.old_name, ", deprecated)")))
        << help;
    const size_t deprecated = help.find("Deprecated:");
    ASSERT_NE(deprecated, std::string::npos) << help;
    EXPECT_NE(help.find("  " + r.old_name + " ", deprecated), std::string::npos)
        << help;
  }
}

}  // namespace
}  // namespace phaseloop
