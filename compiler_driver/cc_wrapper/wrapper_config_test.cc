#include "compiler_driver/cc_wrapper/wrapper_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/files/user_dirs.h"
#include "common/testing/test_util.h"

namespace phaseloop::cc_wrapper {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return files::FixedEnvironment(std::move(vars));
}

TEST(WrapperConfigTest, DefaultsWithoutAnything) {
  WrapperConfig config;
  std::string error;
  ASSERT_TRUE(
      LoadWrapperConfig("", FakeEnv({{"HOME", "/home/u"}}), &config, &error));
  EXPECT_FALSE(config.disabled);
  EXPECT_EQ(config.policy, "baseline");
  EXPECT_EQ(config.spool_dir, "/home/u/.cache/phaseloop/spool");
  EXPECT_EQ(config.clang, "clang-16");
}

// A Bazel action has no environment: the spool is the user's own (under the
// password file's home), and no config file is read (it is none of the
// action's inputs: a `disable = 1` there would put plain clang's objects
// under phaseloop's action keys).
TEST(WrapperConfigTest, InAnEmptyEnvironmentNoConfigFileIsRead) {
  WrapperConfig config;
  std::string error;
  ASSERT_TRUE(LoadWrapperConfig("", FakeEnv({}), &config, &error)) << error;
  EXPECT_EQ(config.config_path, "");
  EXPECT_EQ(config.spool_dir,
            files::OwnPasswdHome().empty()
                ? "/tmp/phaseloop-spool-" + std::to_string(getuid())
                : files::OwnPasswdHome() + "/.cache/phaseloop/spool");
}

TEST(WrapperConfigTest, FlagBeatsEnvironmentBeatsFile) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/cc.conf")
      << "# team defaults\npolicy = fixed:default<Oz>\nspool_dir = /s\n"
         "timeout_ms = 5000\n";
  WrapperConfig config;
  std::string error;
  auto env = FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"}});
  ASSERT_TRUE(LoadWrapperConfig("", env, &config, &error)) << error;
  EXPECT_EQ(config.policy, "fixed:default<Oz>");
  EXPECT_EQ(config.spool_dir, "/s");
  EXPECT_EQ(config.timeout_ms, 5000);
  EXPECT_EQ(config.config_path, dir + "/cc.conf");

  env = FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"},
                 {"PHASELOOP_POLICY", "baseline"},
                 {"PHASELOOP_DISABLE", "1"}});
  ASSERT_TRUE(LoadWrapperConfig("", env, &config, &error));
  EXPECT_EQ(config.policy, "baseline");
  EXPECT_TRUE(config.disabled);
  ASSERT_TRUE(LoadWrapperConfig("fixed:default<O3>", env, &config, &error));
  EXPECT_EQ(config.policy, "fixed:default<O3>");
}

// The trust file artifacts are checked against: none by default, then
// `trust_file` in the file, then PHASELOOP_TRUST_FILE.
TEST(WrapperConfigTest, TrustFileFromFileAndEnvironment) {
  const std::string dir = testing::MakeTempDir();
  WrapperConfig config;
  std::string error;
  ASSERT_TRUE(LoadWrapperConfig("", FakeEnv({}), &config, &error));
  EXPECT_EQ(config.trust_file, "");
  std::ofstream(dir + "/cc.conf") << "trust_file = /etc/phaseloop/trust\n";
  auto env = FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"}});
  ASSERT_TRUE(LoadWrapperConfig("", env, &config, &error)) << error;
  EXPECT_EQ(config.trust_file, "/etc/phaseloop/trust");
  env = FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"},
                 {"PHASELOOP_TRUST_FILE", "/ci/trust"}});
  ASSERT_TRUE(LoadWrapperConfig("", env, &config, &error)) << error;
  EXPECT_EQ(config.trust_file, "/ci/trust");
}

// The spool's cap: 64 MiB by default, `max_size` in the file, then
// PHASELOOP_SPOOL_MAX_SIZE; a bad value in the file is an error naming it.
TEST(WrapperConfigTest, SpoolMaxSizeFromFileAndEnvironment) {
  const std::string dir = testing::MakeTempDir();
  WrapperConfig config;
  std::string error;
  ASSERT_TRUE(LoadWrapperConfig("", FakeEnv({}), &config, &error));
  EXPECT_EQ(config.spool_max_size, int64_t{64} << 20);
  std::ofstream(dir + "/cc.conf") << "max_size = 1Gi\n";
  auto env = FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"}});
  ASSERT_TRUE(LoadWrapperConfig("", env, &config, &error)) << error;
  EXPECT_EQ(config.spool_max_size, int64_t{1} << 30);
  env = FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"},
                 {"PHASELOOP_SPOOL_MAX_SIZE", "0"}});
  ASSERT_TRUE(LoadWrapperConfig("", env, &config, &error)) << error;
  EXPECT_EQ(config.spool_max_size, 0);  // no cap
  std::ofstream(dir + "/bad.conf") << "max_size = lots\n";
  env = FakeEnv({{"PHASELOOP_CONFIG", dir + "/bad.conf"}});
  EXPECT_FALSE(LoadWrapperConfig("", env, &config, &error));
  EXPECT_NE(error.find("max_size"), std::string::npos) << error;
  EXPECT_NE(error.find("'lots'"), std::string::npos) << error;
}

TEST(WrapperConfigTest, BuildIdFromSpoolWhenTheEnvironmentIsStripped) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/BUILD_ID") << "ci-1234\n";
  WrapperConfig config;
  std::string error;
  ASSERT_TRUE(LoadWrapperConfig("", FakeEnv({{"PHASELOOP_SPOOL", dir}}),
                                &config, &error));
  EXPECT_EQ(config.build_id, "ci-1234");
  ASSERT_TRUE(LoadWrapperConfig(
      "", FakeEnv({{"PHASELOOP_SPOOL", dir}, {"PHASELOOP_BUILD_ID", "b"}}),
      &config, &error));
  EXPECT_EQ(config.build_id, "b");
}

TEST(WrapperConfigTest, CountingExecutedInstructionsFromTheEnvironmentOnly) {
  const std::string dir = testing::MakeTempDir();
  WrapperConfig config;
  std::string error;
  ASSERT_TRUE(LoadWrapperConfig("", FakeEnv({{"HOME", dir}}), &config, &error));
  EXPECT_FALSE(config.count_executed);
  ASSERT_TRUE(LoadWrapperConfig(
      "", FakeEnv({{"PHASELOOP_COUNT_EXECUTED", "1"}}), &config, &error));
  EXPECT_TRUE(config.count_executed);
  // Not a config file key: a team's cc.conf cannot instrument builds.
  std::ofstream(dir + "/cc.conf") << "count_executed = 1\n";
  EXPECT_FALSE(LoadWrapperConfig(
      "", FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"}}), &config, &error));
  EXPECT_NE(error.find("unknown key 'count_executed'"), std::string::npos)
      << error;
}

// A value of the environment the wrapper cannot read is config_invalid,
// as the same value in cc.conf is (it was ignored without a word).
TEST(WrapperConfigTest, BadEnvironmentValuesAreNamed) {
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"PHASELOOP_TIMEOUT_MS", "abc"},
           {"PHASELOOP_TIMEOUT_MS", "-5"},
           {"PHASELOOP_COUNT_EXECUTED", "maybe"},
           {"PHASELOOP_DISABLE", "2"},
           {"PHASELOOP_SPOOL_MAX_SIZE", "lots"},
           // The outcome cache read it as its default, without a word.
           {"PHASELOOP_OUTCOME_CACHE_MAX_SIZE", "abc"},
           {"PHASELOOP_OUTCOME_CACHE_MAX_SIZE", "0"},
           {"PHASELOOP_OUTCOME_CACHE_MAX_SIZE", "-1"},
           // Each compile would resolve it in its own directory.
           {"PHASELOOP_SPOOL", "build/spool"}}) {
    WrapperConfig config;
    std::string error;
    EXPECT_FALSE(
        LoadWrapperConfig("", FakeEnv({{name, value}}), &config, &error))
        << name << "=" << value;
    EXPECT_NE(error.find("$" + name + "='" + value + "'"), std::string::npos)
        << error;
  }
  // Set but empty is no value (as before).
  WrapperConfig config;
  std::string error;
  EXPECT_TRUE(
      LoadWrapperConfig("",
                        FakeEnv({{"PHASELOOP_TIMEOUT_MS", ""},
                                 {"PHASELOOP_SPOOL_MAX_SIZE", ""},
                                 {"PHASELOOP_OUTCOME_CACHE_MAX_SIZE", ""},
                                 {"PHASELOOP_COUNT_EXECUTED", ""}}),
                        &config, &error))
      << error;
}

TEST(WrapperConfigTest, BadConfigFilesNameTheLine) {
  const std::string dir = testing::MakeTempDir();
  struct Case {
    std::string text, expected;
  } cases[] = {
      {"policy baseline\n", "cc.conf:1: expected 'key = value'"},
      {"\ncolour = red\n", "cc.conf:2: unknown key 'colour'"},
      {"timeout_ms = soon\n", "timeout_ms must be"},
      {"disable = maybe\n", "disable must be 0 or 1"},
      {"spool_dir = spool\n", "cc.conf:1: spool_dir must be an absolute path"}};
  for (const Case& c : cases) {
    std::ofstream(dir + "/cc.conf") << c.text;
    WrapperConfig config;
    std::string error;
    EXPECT_FALSE(
        LoadWrapperConfig("", FakeEnv({{"PHASELOOP_CONFIG", dir + "/cc.conf"}}),
                          &config, &error));
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
  }
  WrapperConfig config;
  std::string error;
  EXPECT_FALSE(LoadWrapperConfig(
      "", FakeEnv({{"PHASELOOP_CONFIG", dir + "/missing.conf"}}), &config,
      &error));
  EXPECT_NE(error.find("missing.conf"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
