#include "compiler_driver/cc_wrapper/cache_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/files/user_dirs.h"
#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/outcome_cache.h"

namespace phaseloop::cc_wrapper {
namespace {

TEST(CacheCommandTest, StatsCountsAndClearEmpties) {
  const std::string dir = testing::MakeTempDir();
  OutcomeCache cache(dir, std::string("opt:test"));
  PolicyDecision decision;
  decision.pipeline = "default<Oz>";
  decision.measured_pipelines = {{"default<Oz>", 100}};
  for (const char* module : {"m1", "m2", "m3"}) {
    ASSERT_EQ(cache.Store(cache.Lookup(module, "Oz", {}, "s"), decision), "");
  }
  std::ostringstream out, err;
  ASSERT_EQ(RunCacheStats({dir, true}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"entries\":3"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\"max_bytes\":16777216"), std::string::npos);
  out.str("");
  ASSERT_EQ(RunCacheStats({dir, false}, out, err), 0);
  EXPECT_NE(out.str().find("3 choices"), std::string::npos) << out.str();
  out.str("");
  ASSERT_EQ(RunCacheClear({dir, false}, out, err), 0);
  EXPECT_NE(out.str().find("cleared 3 choices"), std::string::npos);
  EXPECT_EQ(ReadOutcomeCacheStats(dir)->entries, 0);
}

// `cache clear --dir D` removed whatever D/outcomes held (a project's own
// outcomes/ folder): only the cache's own files go, or nothing does.
TEST(CacheCommandTest, ClearRemovesOnlyTheCachesOwnFiles) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(std::filesystem::create_directories(dir + "/outcomes/q3"));
  std::ofstream(dir + "/outcomes/q3/report.txt") << "data\n";
  std::ostringstream out, err;
  EXPECT_EQ(RunCacheClear({dir, false}, out, err), 2);
  EXPECT_NE(err.str().find("not outcome-cache entries"), std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("outcomes/q3"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir + "/outcomes/q3/report.txt"));

  // A cache with a write under way (another compile's temporary file):
  // entries go, the write is left to finish; stats count entries only.
  const std::string cache_dir = testing::MakeTempDir();
  OutcomeCache cache(cache_dir, std::string("opt:test"));
  PolicyDecision decision;
  decision.pipeline = "default<Oz>";
  decision.measured_pipelines = {{"default<Oz>", 100}};
  OutcomeLookup lookup = cache.Lookup("m1", "Oz", {}, "s");
  ASSERT_EQ(cache.Store(lookup, decision), "");
  const std::string sub = cache_dir + "/outcomes/" + lookup.key.substr(0, 2);
  const std::string writing = sub + "/.tmp-" + lookup.key + ".123.0";
  std::ofstream(writing) << "partial";
  EXPECT_EQ(ReadOutcomeCacheStats(cache_dir)->entries, 1);
  out.str("");
  ASSERT_EQ(RunCacheClear({cache_dir, false}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("cleared 1 choices"), std::string::npos)
      << out.str();
  EXPECT_EQ(ReadOutcomeCacheStats(cache_dir)->entries, 0);
  EXPECT_TRUE(std::filesystem::exists(writing));
  // One left by a crashed compile (an hour old) goes.
  std::filesystem::last_write_time(
      writing,
      std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  ASSERT_EQ(RunCacheClear({cache_dir, false}, out, err), 0) << err.str();
  EXPECT_FALSE(std::filesystem::exists(writing));
}

// The cap the wrapper applies comes from one reader; a value it cannot read
// falls back to the default, silently in the compile path and with a
// warning naming the variable here.
TEST(CacheCommandTest, StatsShowsTheCapAndWarnsOfOneItCannotRead) {
  const std::string dir = testing::MakeTempDir();
  std::ostringstream out, err;
  setenv(kOutcomeCacheMaxSizeEnv, "2Mi", 1);
  EXPECT_EQ(OutcomeCacheMaxBytesFromEnv(), 2 << 20);
  ASSERT_EQ(RunCacheStats({dir, true}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"max_bytes\":2097152"), std::string::npos);
  EXPECT_EQ(err.str(), "");
  for (const char* bad : {"lots", "-5", "0"}) {
    setenv(kOutcomeCacheMaxSizeEnv, bad, 1);
    std::string warning;
    EXPECT_EQ(OutcomeCacheMaxBytesFromEnv(&warning),
              kDefaultOutcomeCacheMaxBytes);
    EXPECT_NE(warning.find(kOutcomeCacheMaxSizeEnv), std::string::npos);
    out.str("");
    err.str("");
    ASSERT_EQ(RunCacheStats({dir, true}, out, err), 0);
    EXPECT_NE(out.str().find("\"max_bytes\":16777216"), std::string::npos);
    EXPECT_NE(err.str().find("warning: PHASELOOP_OUTCOME_CACHE_MAX_SIZE='"),
              std::string::npos)
        << bad << ": " << err.str();
  }
  unsetenv(kOutcomeCacheMaxSizeEnv);
  EXPECT_EQ(OutcomeCacheMaxBytesFromEnv(), kDefaultOutcomeCacheMaxBytes);
}

TEST(CacheCommandTest, TheCacheIsOnByDefaultUnderTheUsersCacheDirectory) {
  unsetenv(kOutcomeCacheEnv);
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_home = home ? home : "";
  const std::string saved_xdg = xdg ? xdg : "";
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(OutcomeCacheDirFromEnv(), "/home/u/.cache/phaseloop/outcomes");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(OutcomeCacheDirFromEnv(), "/xdg/phaseloop/outcomes");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");  // Bazel's actions: the password file's home
  EXPECT_EQ(OutcomeCacheDirFromEnv(),
            files::OwnPasswdHome().empty()
                ? "/tmp/phaseloop-outcomes-" + std::to_string(getuid())
                : files::OwnPasswdHome() + "/.cache/phaseloop/outcomes");
  setenv(kOutcomeCacheEnv, "/somewhere", 1);
  EXPECT_EQ(OutcomeCacheDirFromEnv(), "/somewhere");
  for (const char* off : {"", "off", "0", "none"}) {
    setenv(kOutcomeCacheEnv, off, 1);
    EXPECT_EQ(OutcomeCacheDirFromEnv(), "") << off;
  }
  unsetenv(kOutcomeCacheEnv);
  if (!saved_home.empty()) setenv("HOME", saved_home.c_str(), 1);
  if (!saved_xdg.empty()) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

TEST(CacheCommandTest, TheDefaultDirectoryIsReadWhenNoneIsNamed) {
  const std::string dir = testing::MakeTempDir() + "/default-outcomes";
  setenv(kOutcomeCacheEnv, dir.c_str(), 1);
  std::ostringstream out, err;
  EXPECT_EQ(RunCacheStats({}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find(dir), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("0 choices"), std::string::npos) << out.str();
  unsetenv(kOutcomeCacheEnv);
}

TEST(CacheCommandTest, ACacheTurnedOffIsBadInputNamingTheFix) {
  setenv(kOutcomeCacheEnv, "off", 1);
  std::ostringstream out, err;
  EXPECT_EQ(RunCacheStats({}, out, err), 2);
  EXPECT_NE(err.str().find("--dir"), std::string::npos);
  EXPECT_NE(err.str().find("PHASELOOP_OUTCOME_CACHE"), std::string::npos);
  EXPECT_EQ(RunCacheClear({}, out, err), 2);
  unsetenv(kOutcomeCacheEnv);
}

TEST(CacheCommandTest, ARelativeCacheDirectoryIsBadInputNamingTheFix) {
  setenv(kOutcomeCacheEnv, "caches/outcomes", 1);
  std::ostringstream out, err;
  EXPECT_EQ(RunCacheStats({}, out, err), 2);
  EXPECT_NE(err.str().find("'caches/outcomes' is a relative path"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("absolute path"), std::string::npos);
  unsetenv(kOutcomeCacheEnv);
}

}  // namespace
}  // namespace phaseloop::cc_wrapper

namespace phaseloop::cc_wrapper {
namespace {

// Paths a user got wrong are bad input (exit 2) found before any work, and
// a --dir that does not exist is said, not read as an empty cache.
TEST(CacheCommandTest, WrongPathsAreBadInputAndAMissingDirIsSaid) {
  const std::string dir = testing::MakeTempDir();
  for (const std::string& out_path :
       {dir + "/no/such/dir/b.plcache", dir, std::string("")}) {
    std::ostringstream out, err;
    EXPECT_EQ(RunCacheExport({dir, false, out_path}, out, err), 2) << out_path;
    EXPECT_NE(err.str().find("--out"), std::string::npos) << err.str();
  }
  std::ostringstream out, err;
  EXPECT_EQ(RunCacheImport({dir + "/cache", false, dir}, out, err), 2);
  EXPECT_NE(err.str().find("is a directory"), std::string::npos) << err.str();

  std::ostringstream stats_out, stats_err;
  ASSERT_EQ(RunCacheStats({dir + "/mistyped", false}, stats_out, stats_err), 0);
  EXPECT_NE(stats_err.str().find("does not exist yet"), std::string::npos)
      << stats_err.str();
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
