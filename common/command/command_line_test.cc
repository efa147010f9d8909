#include "common/command/command_line.h"

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "gtest/gtest.h"

namespace phaseloop::command {
namespace {

struct InputFlags {
  std::string input;
};

// What one parse of a `tool` command line did.
struct Result {
  std::optional<int> rc;  // ParseCommandLine's result
  std::string out;
  std::string err;
  std::vector<std::string> ran;  // leaves whose callback ran
};

// `tool` with: `env --input F` (a leaf with a required option), a group
// `buffer` with `buffer stats --input F`, `train` that passes its
// arguments on (as `phaseloop train` does) and --version.
Result RunTool(std::vector<std::string> args) {
  Result result;
  CLI::App app{"a tool"};
  app.name("tool");
  app.require_subcommand(1);
  app.set_version_flag("--version", "tool 1.2.3");
  int exit_code = 0;
  auto env = AddSubcommand<InputFlags>(app, "env", "env", exit_code,
                                       [&result](const InputFlags&) {
                                         result.ran.push_back("env");
                                         return kExitOk;
                                       });
  env.app->add_option("--input", env.flags->input)->required();
  CLI::App* buffer = AddCommandGroup(app, "buffer", "a group");
  auto stats = AddSubcommand<InputFlags>(*buffer, "stats", "stats", exit_code,
                                         [&result](const InputFlags&) {
                                           result.ran.push_back("stats");
                                           return kExitOk;
                                         });
  stats.app->add_option("--input", stats.flags->input)->required();
  CLI::App* train = app.add_subcommand("train", "passes arguments on");
  train->prefix_command();
  train->set_help_flag();
  train->callback([&result] { result.ran.push_back("train"); });

  args.insert(args.begin(), "path/to/tool");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out, err;
  result.rc = ParseCommandLine(app, static_cast<int>(argv.size()), argv.data(),
                               out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

TEST(CommandLineTest, ParsesAndRunsTheChosenCommand) {
  const Result r = RunTool({"env", "--input", "f"});
  EXPECT_EQ(r.rc, std::nullopt) << r.err;
  EXPECT_EQ(r.ran, std::vector<std::string>{"env"});
  EXPECT_EQ(r.err, "");
}

TEST(CommandLineTest, UnknownOptionIsNamedBeforeMissingRequiredOnes) {
  const Result r = RunTool({"env", "--bogus-flag"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err,
            "tool env: unknown option '--bogus-flag'; see tool env --help\n");
  EXPECT_TRUE(r.ran.empty());
}

TEST(CommandLineTest, UnknownOptionIsNamedEvenWhenAllElseIsRight) {
  const Result r = RunTool({"buffer", "stats", "--input", "f", "--bogus=3"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err,
            "tool buffer stats: unknown option '--bogus'; see tool buffer "
            "stats --help\n");
  EXPECT_TRUE(r.ran.empty()) << "the command ran despite the unknown option";
}

TEST(CommandLineTest, UnknownOptionWinsOverHelp) {
  const Result r = RunTool({"env", "--help", "-x"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err, "tool env: unknown option '-x'; see tool env --help\n");
  EXPECT_EQ(r.out, "");
}

TEST(CommandLineTest, UnknownCommandIsNamedWithTheValidOnes) {
  const Result r = RunTool({"nosuchcommand"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err,
            "tool: unknown command 'nosuchcommand'; commands: env, buffer, "
            "train; see tool --help\n");
  const Result in_group = RunTool({"buffer", "nosuch", "--input", "f"});
  EXPECT_EQ(in_group.rc, kExitBadInput);
  EXPECT_EQ(in_group.err,
            "tool buffer: unknown command 'nosuch'; commands: stats; see tool "
            "buffer --help\n");
}

TEST(CommandLineTest, HelpOfAnUnknownCommandIsAnError) {
  const Result r = RunTool({"loop", "--help"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("unknown command 'loop'"), std::string::npos) << r.err;
}

TEST(CommandLineTest, ExtraArgumentIsNamed) {
  const Result r = RunTool({"env", "--input", "f", "stray"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err,
            "tool env: unexpected argument 'stray'; see tool env --help\n");
}

TEST(CommandLineTest, GroupWithoutACommandListsItsCommands) {
  const Result r = RunTool({"buffer"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err,
            "tool buffer: a command is required: stats; see tool buffer "
            "--help\n");
}

TEST(CommandLineTest, OtherErrorsNameTheCommand) {
  const Result r = RunTool({"env"});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_EQ(r.err, "tool env: --input is required; see tool env --help\n");
}

TEST(CommandLineTest, NoArgumentsPrintsHelpAndIsAUsageError) {
  const Result r = RunTool({});
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_NE(r.out.find("Usage: tool"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("buffer"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(CommandLineTest, HelpAndVersionSucceed) {
  const Result help = RunTool({"buffer", "stats", "--help"});
  EXPECT_EQ(help.rc, kExitOk);
  EXPECT_NE(help.out.find("--input"), std::string::npos) << help.out;
  EXPECT_EQ(help.err, "");
  const Result version = RunTool({"--version"});
  EXPECT_EQ(version.rc, kExitOk);
  EXPECT_EQ(version.out, "tool 1.2.3\n");
}

TEST(CommandLineTest, ACommandThatPassesArgumentsOnIsNotSecondGuessed) {
  const Result r = RunTool({"train", "--bogus-flag", "--help"});
  EXPECT_EQ(r.rc, std::nullopt) << r.err;
  EXPECT_EQ(r.ran, std::vector<std::string>{"train"});
}

}  // namespace
}  // namespace phaseloop::command
