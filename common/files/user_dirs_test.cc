#include "common/files/user_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
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

std::string MakeTempDir() {
  char dir_template[] = "/tmp/user-dirs-test-XXXXXX";
  return mkdtemp(dir_template);
}

TEST(PasswdHomeTest, TheUsersLineWhenItsHomeIsAnOwnedDirectory) {
  const std::string base = MakeTempDir();
  const uid_t uid = getuid();
  const std::string u = std::to_string(uid);
  const std::string home = base + "/home";
  ASSERT_EQ(mkdir(home.c_str(), 0700), 0);
  const std::string passwd = base + "/passwd";
  {
    std::ofstream out(passwd);
    out << "# a comment\n"
        << "short:x:" << u << "\n"  // too few fields: skipped
        << "other:x:" << uid + 1 << ":0::/elsewhere:/bin/sh\n"
        << "me:x:" << u << ":100:Me,,,:" << home << ":/bin/bash\n"
        << "again:x:" << u << ":100::/root:/bin/sh\n";  // the first wins
  }
  EXPECT_EQ(PasswdHome(uid, uid, passwd), home);
  EXPECT_EQ(PasswdHome(uid + 2, uid, passwd), "");  // no line
  EXPECT_EQ(PasswdHome(uid, uid, base + "/missing"), "");

  // A home that is missing, relative, a file or (for another uid) not owned
  // by the user is none: the caller's own fallback applies.
  for (const std::string& bad :
       {base + "/missing", std::string("home"), passwd}) {
    std::ofstream(passwd) << "me:x:" << u << ":100::" << bad << ":/bin/sh\n";
    EXPECT_EQ(PasswdHome(uid, uid, passwd), "") << bad;
  }
  // Another account's line naming this home: looked up by that account, the
  // home must be owned by the owner given (a sandbox's view of the user).
  std::ofstream(passwd) << "me:x:" << uid + 1 << ":100::" << home
                        << ":/bin/sh\n";
  EXPECT_EQ(PasswdHome(uid + 1, uid + 1, passwd), "");
  EXPECT_EQ(PasswdHome(uid + 1, uid, passwd), home);
}

// --sandbox_fake_username: the action is nobody inside a user namespace
// whose uid_map maps it to the user; the user's account is looked up.
TEST(PasswdHomeTest, OutsideUidFollowsTheUserNamespace) {
  EXPECT_EQ(OutsideUid(65534, "     65534       1000          1\n"), 1000u);
  EXPECT_EQ(OutsideUid(0, "         0          0 4294967295\n"), 0u);
  EXPECT_EQ(OutsideUid(5, "0 100000 65536\n"), 100005u);
  EXPECT_EQ(OutsideUid(70000, "0 100000 65536\n"), 70000u);  // not mapped
  EXPECT_EQ(OutsideUid(42, ""), 42u);  // no uid_map (no /proc)
  EXPECT_EQ(OutsideUid(7, "0 1000 1\n7 2000 1\n"), 2000u);
}

// Bazel's actions run without HOME: caches (only) are then found under the
// password file's home, where the user's shell finds them.
TEST(UserDirTest, CachesWithoutHomeAreUnderThePasswordFilesHome) {
  EXPECT_EQ(UserCacheDir("spool", Env({}), "/home/p"),
            "/home/p/.cache/phaseloop/spool");
  EXPECT_EQ(UserCacheDir("spool", Env({{"HOME", ""}}), "/home/p"),
            "/home/p/.cache/phaseloop/spool");
  // The environment wins; no home anywhere: none.
  EXPECT_EQ(UserCacheDir("spool", Env({{"HOME", "/home/u"}}), "/home/p"),
            "/home/u/.cache/phaseloop/spool");
  EXPECT_EQ(UserCacheDir("outcomes", Env({{"XDG_CACHE_HOME", "/c"}}), "/p"),
            "/c/phaseloop/outcomes");
  EXPECT_EQ(UserCacheDir("spool", Env({}), ""), "");
  // By default the password file's home of this user.
  EXPECT_EQ(OwnPasswdHome(), PasswdHome(getuid(), getuid()));  // no namespace
  EXPECT_EQ(UserCacheDir("spool", Env({})),
            OwnPasswdHome().empty()
                ? ""
                : OwnPasswdHome() + "/.cache/phaseloop/spool");
  // Config files are not looked for there (an action would read one that is
  // none of its inputs).
  EXPECT_EQ(UserDir(UserDirKind::kConfig, "cc.conf", Env({})), "");
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

// What a reader trusts in a shared directory: only this user's own private
// directory, nothing repaired.
TEST(UserDirTest, OwnPrivateDirectoriesOnly) {
  char base_template[] = "/tmp/user-dirs-test-XXXXXX";
  const std::string base = mkdtemp(base_template);
  EXPECT_TRUE(IsOwnPrivateDir(base));  // mkdtemp makes it 0700
  const std::string group = base + "/group";
  ASSERT_EQ(mkdir(group.c_str(), 0700), 0);
  ASSERT_EQ(chmod(group.c_str(), 0770), 0);
  EXPECT_FALSE(IsOwnPrivateDir(group));
  struct stat st;
  ASSERT_EQ(stat(group.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0770u);  // left as it was
  const std::string open = base + "/open";
  ASSERT_EQ(mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open.c_str(), 0707), 0);
  EXPECT_FALSE(IsOwnPrivateDir(open));
  ASSERT_EQ(symlink(base.c_str(), (base + "/link").c_str()), 0);
  EXPECT_FALSE(IsOwnPrivateDir(base + "/link"));
  ASSERT_EQ(close(creat((base + "/file").c_str(), 0600)), 0);
  EXPECT_FALSE(IsOwnPrivateDir(base + "/file"));
  EXPECT_FALSE(IsOwnPrivateDir(base + "/missing"));
  if (getuid() != 0) EXPECT_FALSE(IsOwnPrivateDir("/"));
}

}  // namespace
}  // namespace phaseloop::files
