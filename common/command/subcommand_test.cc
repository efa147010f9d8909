#include "common/command/subcommand.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "common/command/exit_code.h"
#include "gtest/gtest.h"

namespace phaseloop::command {
namespace {

struct EchoFlags {
  std::string word;
  std::string kafka;
};

// Parses argv (without the program name) into a fresh app with a group
// `tool` and a leaf `tool echo --word W [--kafka B]`; returns the exit code
// the chosen command set.
int RunTool(std::vector<std::string> args, EchoFlags* seen) {
  CLI::App app{"test"};
  int exit_code = -1;
  CLI::App* group = AddCommandGroup(app, "tool", "a group");
  auto echo = AddSubcommand<EchoFlags>(
      *group, "echo", "echoes", exit_code, [seen](const EchoFlags& flags) {
        *seen = flags;
        return flags.word == "bad" ? kExitBadInput : kExitOk;
      });
  echo.app->add_option("--word", echo.flags->word)->required();
  AddKafkaOption(*echo.app, echo.flags->kafka);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return 100 + e.get_exit_code();
  }
  return exit_code;
}

TEST(SubcommandTest, RunsTheChosenLeafWithItsFlags) {
  EchoFlags seen;
  EXPECT_EQ(RunTool({"tool", "echo", "--word", "hi", "--kafka", "h:1"}, &seen),
            kExitOk);
  EXPECT_EQ(seen.word, "hi");
  EXPECT_EQ(seen.kafka, "h:1");
  EXPECT_EQ(RunTool({"tool", "echo", "--word", "bad"}, &seen), kExitBadInput);
}

TEST(SubcommandTest, AGroupRequiresASubcommand) {
  EchoFlags seen;
  EXPECT_GT(RunTool({"tool"}, &seen), 100);
}

TEST(SubcommandTest, KafkaDefaultsToTheEnvironment) {
  setenv(kKafkaEnv, "env-host:9092", 1);
  EchoFlags seen;
  EXPECT_EQ(RunTool({"tool", "echo", "--word", "x"}, &seen), kExitOk);
  EXPECT_EQ(seen.kafka, "env-host:9092");
  EXPECT_EQ(
      RunTool({"tool", "echo", "--word", "x", "--kafka", "flag:1"}, &seen),
      kExitOk);
  EXPECT_EQ(seen.kafka, "flag:1");
  unsetenv(kKafkaEnv);
}

TEST(KafkaOptionTest, ParsesKafkaFlag) {
  CLI::App app;
  std::string bootstrap;
  AddKafkaOption(app, bootstrap);
  app.parse("--kafka 127.0.0.1:9092,127.0.0.1:9093",
            /*program_name_included=*/false);
  EXPECT_EQ(bootstrap, "127.0.0.1:9092,127.0.0.1:9093");
}

}  // namespace
}  // namespace phaseloop::command
