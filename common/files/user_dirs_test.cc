#include "common/files/user_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
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

// Anyone can make /tmp/<prefix>-<uid> first: only this user's own private
// directory is used (the review planted cache entries and records there).
TEST(UserDirTest, APerUserTmpDirIsPrivateOrNotUsed) {
  char base_template[] = "/tmp/user-dirs-test-XXXXXX";
  const std::string base = mkdtemp(base_template);
  const std::string uid = std::to_string(getuid());
  const std::string made = base + "/made-" + uid;
  EXPECT_EQ(PerUserTmpDir("made", base), made);
  struct stat st;
  ASSERT_EQ(stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(PerUserTmpDir("made", base), made);  // again: the same

  // This user's own, left group-writable by an earlier version (umask
  // 002): made private again and used.
  const std::string group = base + "/group-" + uid;
  ASSERT_EQ(mkdir(group.c_str(), 0700), 0);
  ASSERT_EQ(chmod(group.c_str(), 0775), 0);
  EXPECT_EQ(PerUserTmpDir("group", base), group);
  ASSERT_EQ(stat(group.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // Writable by anyone: what it holds may be anyone's; not used.
  const std::string open = base + "/open-" + uid;
  ASSERT_EQ(mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open.c_str(), 0777), 0);
  EXPECT_EQ(PerUserTmpDir("open", base), "");

  const std::string elsewhere = base + "/elsewhere";
  ASSERT_EQ(mkdir(elsewhere.c_str(), 0700), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), (base + "/link-" + uid).c_str()), 0);
  EXPECT_EQ(PerUserTmpDir("link", base), "");

  ASSERT_EQ(close(creat((base + "/file-" + uid).c_str(), 0600)), 0);
  EXPECT_EQ(PerUserTmpDir("file", base), "");
}

}  // namespace
}  // namespace phaseloop::files
