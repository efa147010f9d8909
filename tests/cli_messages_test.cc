// Issue #15, "Messages that mislead": the real `phaseloop` binary names the
// input it did not understand and the fix, with exit code 2, and its
// messages name only commands that exist.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/command/version.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop {
namespace {

constexpr char kPhaseloop[] = "tools/phaseloop";

// Every leaf command, by its words after `phaseloop`.
const std::vector<std::string>& AllCommands() {
  static const auto* commands = new std::vector<std::string>{
      "env",
      "actions",
      "survey",
      "search",
      "search-jobs submit",
      "search-jobs work",
      "corpus build",
      "corpus fetch-debian",
      "corpus generate",
      "stage",
      "profile",
      "decisions ship",
      "decisions show",
      "stats",
      "cache stats",
      "cache clear",
      "cache export",
      "cache import",
      "toolchain bazel",
      "kafka serve",
      "buffer stats",
      "buffer miscompiles",
      "buffer export",
      "buffer import",
      "buffer ingest",
      "buffer add",
      "policy serve",
      "policy push",
      "policy list",
      "policy promote",
      "policy rollback",
      "policy mark",
      "policy pull",
      "policy show",
      "policy keygen",
      "policy sign",
      "policy verify",
      "sli send",
      "eval",
      "candidates mine",
      "train",
      "rewards run",
      "slo status",
      "slo check",
      "canary judge",
      "canary load",
      "canary serve",
      "canary budget",
      "canary run",
      "canary list",
      "canary report",
      "loop",
      "report",
      "config check",
  };
  return *commands;
}

std::vector<std::string> Words(const std::string& command) {
  if (command.empty()) return {};
  return absl::StrSplit(command, ' ');
}

// Runs `phaseloop ARGS`; returns the exit code, stdout+stderr in `output`.
int Phaseloop(const std::vector<std::string>& args, std::string* output) {
  std::vector<std::string> argv = {kPhaseloop};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunCommand(argv, output);
}

class CliMessagesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // `phaseloop train` execs phaseloop-train: the one this test was built
    // with.
    const std::string train =
        std::filesystem::absolute("offline_rl/learner/phaseloop-train");
    ASSERT_EQ(setenv("PHASELOOP_TRAIN_BINARY", train.c_str(), 1), 0);
  }
};

// The commands `phaseloop COMMAND nosuchcommand` lists ("" for a leaf).
std::set<std::string> ListedCommands(const std::string& command) {
  std::vector<std::string> args = Words(command);
  args.push_back("nosuchcommand");
  std::string output;
  Phaseloop(args, &output);
  const std::string marker = "unknown command 'nosuchcommand'; commands: ";
  const size_t at = output.find(marker);
  if (at == std::string::npos) return {};
  const size_t start = at + marker.size();
  const std::string list =
      output.substr(start, output.find(';', start) - start);
  std::set<std::string> listed;
  for (absl::string_view name : absl::StrSplit(list, ", ")) {
    listed.insert(command.empty() ? std::string(name)
                                  : absl::StrCat(command, " ", name));
  }
  return listed;
}

// Each `phaseloop WORDS` the message names is a command: `phaseloop WORDS
// --help` succeeds.
void ExpectNamedCommandsExist(const std::string& message) {
  static const std::regex kNamed("phaseloop((?: [a-z][a-z0-9-]*)+)");
  for (std::sregex_iterator it(message.begin(), message.end(), kNamed), end;
       it != end; ++it) {
    std::vector<std::string> args = Words(it->str(1).substr(1));
    args.push_back("--help");
    std::string help;
    EXPECT_EQ(Phaseloop(args, &help), 0)
        << "the message names `" << it->str(0) << "`, which is no command:\n"
        << message << "\n--help said:\n"
        << help;
  }
}

// 1. An unknown flag is named as unknown before anything else, by every
// command, and nothing runs (kafka serve and policy serve do not serve).
TEST_F(CliMessagesTest, EveryCommandNamesAnUnknownFlag) {
  for (const std::string& command : AllCommands()) {
    std::vector<std::string> args = Words(command);
    args.push_back("--bogus-flag");
    std::string output;
    EXPECT_EQ(Phaseloop(args, &output), 2) << command << ":\n" << output;
    EXPECT_TRUE(absl::StrContains(output, "unknown option '--bogus-flag'"))
        << command << ":\n"
        << output;
    EXPECT_TRUE(absl::StrContains(output, absl::StrCat("phaseloop ", command)))
        << command << ":\n"
        << output;
    EXPECT_FALSE(absl::StrContains(output, "is required")) << command << ":\n"
                                                           << output;
    ExpectNamedCommandsExist(output);
  }
}

// The loop above covers every command: what the binary lists, at the top
// and in each group, is the list.
TEST_F(CliMessagesTest, TheLoopCoversEveryCommand) {
  std::set<std::string> listed_leaves;
  for (const std::string& top : ListedCommands("")) {
    const std::set<std::string> below = ListedCommands(top);
    if (below.empty()) {
      listed_leaves.insert(top);
    } else {
      listed_leaves.insert(below.begin(), below.end());
    }
  }
  EXPECT_EQ(listed_leaves,
            std::set<std::string>(AllCommands().begin(), AllCommands().end()));
}

TEST_F(CliMessagesTest, UnknownFlagWinsEvenWhenTheRestIsRight) {
  std::string output;
  EXPECT_EQ(Phaseloop({"env", "--input", "/nonexistent.ll", "--bogus-flag=1"},
                      &output),
            2);
  EXPECT_EQ(output,
            "phaseloop env: unknown option '--bogus-flag'; see phaseloop env "
            "--help\n");
}

// 2. An unknown command is named, with the valid ones.
TEST_F(CliMessagesTest, UnknownCommandIsNamedWithTheValidOnes) {
  std::string output;
  EXPECT_EQ(Phaseloop({"nosuchcommand"}, &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "unknown command 'nosuchcommand'"))
      << output;
  EXPECT_TRUE(absl::StrContains(output, "commands: env, actions,")) << output;
  EXPECT_FALSE(absl::StrContains(output, "A subcommand is required")) << output;
  EXPECT_EQ(Phaseloop({"buffer", "nosuchcommand"}, &output), 2);
  EXPECT_TRUE(absl::StrContains(
      output, "phaseloop buffer: unknown command 'nosuchcommand'"))
      << output;
  // A group given no command lists them too.
  EXPECT_EQ(Phaseloop({"policy"}, &output), 2);
  EXPECT_TRUE(
      absl::StrContains(output, "phaseloop policy: a command is required: "))
      << output;
  EXPECT_TRUE(absl::StrContains(output, "show")) << output;
}

// 3. --help of an unknown command is an error, not the top-level help.
TEST_F(CliMessagesTest, HelpOfAnUnknownCommandIsAnError) {
  std::string output;
  EXPECT_EQ(Phaseloop({"warp", "--help"}, &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "unknown command 'warp'")) << output;
  EXPECT_FALSE(absl::StrContains(output, "Usage:")) << output;
  // Help of real commands still works.
  EXPECT_EQ(Phaseloop({"--help"}, &output), 0);
  EXPECT_TRUE(absl::StrContains(output, "Usage: phaseloop")) << output;
  EXPECT_EQ(Phaseloop({"policy", "show", "--help"}, &output), 0);
  EXPECT_TRUE(absl::StrContains(output, "artifact file")) << output;
}

// 4. Bare `phaseloop` prints its help on stdout and exits 2.
TEST_F(CliMessagesTest, BarePhaseloopPrintsHelpToStdoutAndExitsTwo) {
  std::string output;
  EXPECT_EQ(
      testing::RunCommand(
          {"/bin/sh", "-c", absl::StrCat("exec ", kPhaseloop, " 2>/dev/null")},
          &output),
      2);
  EXPECT_TRUE(absl::StrContains(output, "Usage: phaseloop")) << output;
  EXPECT_TRUE(absl::StrContains(output, "policy")) << output;
}

// 5. --version: phaseloop's version and the LLVM it links.
TEST_F(CliMessagesTest, VersionNamesPhaseloopAndLlvm) {
  std::string output;
  EXPECT_EQ(Phaseloop({"--version"}, &output), 0);
  EXPECT_TRUE(absl::StartsWith(
      output,
      absl::StrCat("phaseloop ", command::kPhaseloopVersion, " (LLVM 16.")))
      << output;
  EXPECT_TRUE(absl::EndsWith(output, ")\n")) << output;
}

// 6. A damaged artifact's message names commands that exist (it named
// `phaseloop learn export`).
TEST_F(CliMessagesTest, DamagedArtifactHintNamesRealCommands) {
  const std::string file = testing::MakeTempDir() + "/damaged.plpolicy";
  std::ofstream(file) << "not a policy\n";
  std::string output;
  EXPECT_EQ(Phaseloop({"policy", "show", file}, &output), 2) << output;
  EXPECT_TRUE(absl::StrContains(output, file)) << output;
  EXPECT_TRUE(absl::StrContains(output, "phaseloop train")) << output;
  EXPECT_FALSE(absl::StrContains(output, "learn export")) << output;
  ExpectNamedCommandsExist(output);
}

// A refused run leaves nothing behind: `rewards run` checks its metrics
// port before it creates the buffer the flags name.
TEST_F(CliMessagesTest, RefusedRewardsRunCreatesNoBuffer) {
  const std::string buffer = testing::MakeTempDir() + "/rewards.db";
  std::string output;
  EXPECT_EQ(
      Phaseloop({"rewards", "run", "--kafka", "127.0.0.1:1", "--buffer", buffer,
                 "--slo-dir", "configs/slo", "--metrics-port", "99999"},
                &output),
      2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "--metrics-port 99999")) << output;
  EXPECT_FALSE(std::filesystem::exists(buffer)) << output;
}

// Black-box review (thirty-third session): found only after builds and
// runs, or not at all — NaN through CLI11's ranges, a profile --out in a
// missing directory (made, as root), a work directory make cannot use.
TEST_F(CliMessagesTest, StagingFlagsAreCheckedBeforeAnyBuild) {
  std::string output;
  for (const char* flag : {"--half-width", "--confidence"}) {
    EXPECT_EQ(Phaseloop({"stage", "--workload", "example", "--policy",
                         "baseline", flag, "nan"},
                        &output),
              2)
        << output;
    EXPECT_TRUE(absl::StrContains(output, "got 'nan'")) << output;
  }
  EXPECT_EQ(Phaseloop({"profile", "--workload", "example", "--out",
                       "/nonexistent/dir/x.profdata"},
                      &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "does not exist; create it first"))
      << output;
  EXPECT_FALSE(std::filesystem::exists("/nonexistent/dir"));
  EXPECT_EQ(Phaseloop({"profile", "--workload", "example", "--work-dir",
                       testing::MakeTempDir() + "/a b"},
                      &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "holds a blank")) << output;
}

// Black-box review: a mistyped state directory looked like one with no
// runs (exit 0); NaN passed --slowdown's and the staging bound's checks.
TEST_F(CliMessagesTest, WrongStateDirectoriesAndNanAreBadInput) {
  std::string output;
  EXPECT_EQ(Phaseloop({"canary", "list", "--state-dir", "/nonexistent/state"},
                      &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "/nonexistent/state does not exist"))
      << output;
  EXPECT_EQ(
      Phaseloop({"canary", "serve", "--handler", "x.so", "--slowdown", "nan"},
                &output),
      2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "--slowdown")) << output;
  EXPECT_EQ(
      Phaseloop({"canary", "run", "--service", "configs/services/demo.yaml",
                 "--candidate", "x", "--staging-lower-bound", "nan"},
                &output),
      2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "--staging-lower-bound")) << output;
  // A topic name Kafka refuses (the embedded cluster made it).
  EXPECT_EQ(Phaseloop({"sli", "send", "--kafka", "127.0.0.1:1", "--in",
                       "/dev/null", "--topic", "bad topic!"},
                      &output),
            2)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "expected a Kafka topic name"))
      << output;
}

// A path need not be UTF-8: JSON output holding one aborted with an uncaught
// nlohmann type_error (exit 134). Every command's JSON replaces such bytes.
TEST_F(CliMessagesTest, JsonOfAPathThatIsNotUtf8) {
  const std::string dir = testing::MakeTempDir() + "/cach\xe9";
  std::filesystem::create_directories(dir);
  std::string output;
  EXPECT_EQ(Phaseloop({"cache", "stats", "--dir", dir, "--json"}, &output), 0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "cach\xef\xbf\xbd")) << output;
}

}  // namespace
}  // namespace phaseloop
