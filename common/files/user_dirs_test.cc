#include "common/files/user_dirs.h"

#include <unistd.h>

#include <map>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace phaseloop::files {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return FixedEnvironment(std::move(vars));
}

TEST(UserDirTest, XdgVariablesWinOverHome) {
  const EnvLookup env = Env({{"HOME", "/home/u"},
                             {"XDG_CACHE_HOME", "/c"},
                             {"XDG_CONFIG_HOME", "/f"},
                             {"XDG_STATE_HOME", "/s"}});
  EXPECT_EQ(UserDir(UserDirKind::kCache, "outcomes", env),
            "/c/phaseloop/outcomes");
  EXPECT_EQ(UserDir(UserDirKind::kConfig, "cc.conf", env),
            "/f/phaseloop/cc.conf");
  EXPECT_EQ(UserDir(UserDirKind::kState, "", env), "/s/phaseloop");
}

TEST(UserDirTest, HomeWhenTheXdgVariableIsUnsetOrEmpty) {
  const EnvLookup env = Env({{"HOME", "/home/u"}, {"XDG_CACHE_HOME", ""}});
  EXPECT_EQ(UserDir(UserDirKind::kCache, "spool", env),
            "/home/u/.cache/phaseloop/spool");
  EXPECT_EQ(UserDir(UserDirKind::kConfig, "cc.conf", env),
            "/home/u/.config/phaseloop/cc.conf");
  EXPECT_EQ(UserDir(UserDirKind::kState, "", env),
            "/home/u/.local/state/phaseloop");
}

// Bazel runs actions without HOME: the caller picks its own fallback.
TEST(UserDirTest, NothingWithoutHomeOrXdg) {
  EXPECT_EQ(UserDir(UserDirKind::kCache, "spool", Env({})), "");
  EXPECT_EQ(UserDir(UserDirKind::kCache, "spool", Env({{"HOME", ""}})), "");
  EXPECT_EQ(PerUserTmpDir("phaseloop-spool"),
            "/tmp/phaseloop-spool-" + std::to_string(getuid()));
}

}  // namespace
}  // namespace phaseloop::files
