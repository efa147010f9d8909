#include "common/command/subcommand.h"

#include <cstdlib>
#include <sstream>
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

TEST(KafkaOptionTest, TakesWhatLibrdkafkaTakes) {
  for (const std::string ok :
       {"127.0.0.1:9092", "h:1", "broker-1.example.com:9093", "a:1, b:2",
        "localhost", "PLAINTEXT://k1:9092,plaintext://k2:9093", "[::1]:9092",
        "[fe80::1]", "kafka_0:65535", "a:1,", "a:1,,b:2", "k:9092\n",
        "\tk:9092\r\n", "Broker-1.Example.COM:9092"}) {
    EXPECT_EQ(BootstrapServersError(ok), "") << ok;
  }
  EXPECT_EQ(BootstrapServersError(""), "");
}

TEST(KafkaOptionTest, RefusesWhatIsNoBootstrapList) {
  for (const std::string bad :
       {"garbage::::", "::1:9092", "h:0", "h:65536", "h:port", "h:", ":9092",
        ",", " , ", "host name:1", "[::1", "[::1]9092", "bad-scheme.x://h:1",
        "h/1:2", "SSL://k:9093", "SASL_SSL://k:9093"}) {
    const std::string error = BootstrapServersError(bad);
    EXPECT_NE(error.find("'" + bad + "' is not a list of Kafka bootstrap"),
              std::string::npos)
        << bad << ": " << error;
    EXPECT_NE(error.find("host:port"), std::string::npos) << error;
  }
  EXPECT_NE(BootstrapServersError("a:1,b::2").find("'b::2' is not host:port"),
            std::string::npos);
  // phaseloop's clients speak plaintext: librdkafka would drop an SSL
  // address and retry for ever.
  EXPECT_NE(BootstrapServersError("SSL://k:9093").find("plaintext listener"),
            std::string::npos);
  // Through the option (flag and environment): a parse error.
  EchoFlags seen;
  EXPECT_EQ(
      RunTool({"tool", "echo", "--word", "x", "--kafka", "garbage::::"}, &seen),
      100 + CLI::ValidationError("", "").get_exit_code());
  setenv(kKafkaEnv, "a:b:c", 1);
  EXPECT_GT(RunTool({"tool", "echo", "--word", "x"}, &seen), 100);
  unsetenv(kKafkaEnv);
}

// `tool wait [--exit-when-idle-ms N | --idle-exit-ms N]`, parsed from
// `args`; what the old name printed goes to *notes.
struct Renamed {
  int64_t value = -1;
  std::string notes;
  std::string error;  // the parse error, if any
};

Renamed ParseRenamed(const std::string& args) {
  CLI::App app{"test", "tool"};
  CLI::App* wait = app.add_subcommand("wait", "waits");
  Renamed result;
  std::ostringstream notes;
  AddRenamedOption(*wait, "--exit-when-idle-ms", "--idle-exit-ms", result.value,
                   "stop when idle", notes);
  try {
    app.parse("wait " + args, /*program_name_included=*/false);
  } catch (const CLI::ParseError& e) {
    result.error = e.what();
  }
  result.notes = notes.str();
  return result;
}

TEST(RenamedOptionTest, TheNewNameSetsTheValueQuietly) {
  Renamed r = ParseRenamed("--exit-when-idle-ms 5000");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.value, 5000);
  EXPECT_EQ(r.notes, "");
}

TEST(RenamedOptionTest, TheOldNameSetsTheSameValueAndSaysItIsDeprecated) {
  Renamed r = ParseRenamed("--idle-exit-ms 5000");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.value, 5000);
  EXPECT_EQ(
      r.notes,
      "tool wait: --idle-exit-ms is deprecated; use --exit-when-idle-ms\n");
  r = ParseRenamed("--idle-exit-ms=7");
  EXPECT_EQ(r.value, 7);
}

TEST(RenamedOptionTest, BothNamesAtOnceAreAnError) {
  Renamed r = ParseRenamed("--idle-exit-ms 1 --exit-when-idle-ms 2");
  EXPECT_NE(r.error.find("--idle-exit-ms"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("--exit-when-idle-ms"), std::string::npos) << r.error;
}

TEST(RenamedOptionTest, HelpShowsTheNewNameAndTheAlias) {
  CLI::App app{"test", "tool"};
  int64_t value = 0;
  std::ostringstream notes;
  AddRenamedOption(app, "--exit-when-idle-ms", "--idle-exit-ms", value,
                   "stop when idle", notes);
  const std::string help = app.help();
  EXPECT_NE(help.find("--exit-when-idle-ms"), std::string::npos) << help;
  EXPECT_NE(help.find("stop when idle (alias: --idle-exit-ms, deprecated)"),
            std::string::npos)
      << help;
  // The old name is listed apart.
  const size_t deprecated = help.find("Deprecated:");
  ASSERT_NE(deprecated, std::string::npos) << help;
  EXPECT_NE(help.find("--idle-exit-ms INT", deprecated), std::string::npos)
      << help;
}

}  // namespace
}  // namespace phaseloop::command
