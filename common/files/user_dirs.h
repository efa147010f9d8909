#ifndef PHASELOOP_COMMON_FILES_USER_DIRS_H_
#define PHASELOOP_COMMON_FILES_USER_DIRS_H_

// The user's phaseloop directories, by the XDG base directory rules: the one
// place that reads XDG_CACHE_HOME / XDG_CONFIG_HOME / XDG_STATE_HOME and HOME
// for them. Every stage's default cache, config and state paths come from
// here, so a user who moves XDG_CACHE_HOME moves all of phaseloop's caches.
// Each caller decides what to do when neither variable is set (Bazel runs
// actions without HOME): a per-user /tmp directory, an error naming its flag.
// Standard library only: phaseloop-cc's launcher links it.

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace phaseloop::files {

// An environment variable's value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;

// The process environment (std::getenv).
EnvLookup ProcessEnvironment();

// An environment holding exactly `vars` (tests; a made-up environment).
EnvLookup FixedEnvironment(std::map<std::string, std::string> vars);

enum class UserDirKind {
  kCache,   // $XDG_CACHE_HOME/phaseloop, else $HOME/.cache/phaseloop
  kConfig,  // $XDG_CONFIG_HOME/phaseloop, else $HOME/.config/phaseloop
  kState,   // $XDG_STATE_HOME/phaseloop, else $HOME/.local/state/phaseloop
};

// `name` (a relative path; "" for the directory itself) under the user's
// phaseloop directory of `kind`; "" when neither the XDG variable nor HOME is
// set (an empty value counts as unset). Nothing is created.
std::string UserDir(UserDirKind kind, std::string_view name,
                    const EnvLookup& env = ProcessEnvironment());

// The home directory of user `account` in the password file `passwd` (a
// `name:password:uid:gid:gecos:home:shell` line; the first for the uid),
// when it is an absolute path to an existing directory `owner` owns (as
// this process sees owners); else "" (no such line, a user known only to a
// directory service, a shared or missing home such as /nonexistent). The
// file is read rather than asked through getpwuid: phaseloop-cc is linked
// statically, where glibc's name service loads shared libraries of the
// installed glibc at run time.
std::string PasswdHome(uid_t account, uid_t owner,
                       const std::string& passwd = "/etc/passwd");

// The uid `inside` is outside this process's user namespace, by the
// namespace's uid_map (`/proc/self/uid_map`: "inside outside count" lines);
// `inside` when no line covers it. Bazel's sandbox with
// --sandbox_fake_username runs an action as nobody (65534) mapped to the
// user: the account to look up is the user's, not nobody's.
uid_t OutsideUid(uid_t inside, std::string_view uid_map);

// The home directory of the account running this process, outside any user
// namespace, from the password file (PasswdHome), read once.
const std::string& OwnPasswdHome();

// `name` under the user's phaseloop cache directory: UserDir(kCache, name,
// env), else — neither XDG_CACHE_HOME nor HOME set: Bazel runs actions so —
// under `home`/.cache/phaseloop (the password file's home), so a compile
// action finds the same spool and outcome cache as the user's shell and a
// generated toolchain need not name them (each user's would differ, and so
// would every action key of a shared remote cache); else "". For caches
// only: a config file found this way would be read by Bazel actions
// without being one of their inputs.
std::string UserCacheDir(std::string_view name, const EnvLookup& env,
                         const std::string& home);
// The same with this user's OwnPasswdHome, read only when needed (every
// compile asks; most have HOME).
std::string UserCacheDir(std::string_view name,
                         const EnvLookup& env = ProcessEnvironment());

// Whether `path` is this user's own private directory: a directory (not a
// link to one), owned by this process's uid, writable by neither its group
// nor others. Only such a place in a shared directory such as /tmp is
// trusted: anyone may have made the name first and filled it.
bool IsOwnPrivateDir(const std::string& path);

// <base>/<prefix>-<uid> (base /tmp): a per-user place for a default when
// UserDir is "", made private (0700) when missing or when this user's own
// is group-writable. "" when it is not this user's own directory — a name
// anyone can take first in /tmp (a link, another user's) — or anyone may
// write to it: the caller goes without (another local user planted cache
// entries and decision records there).
std::string PerUserTmpDir(std::string_view prefix,
                          const std::string& base = "/tmp");

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_USER_DIRS_H_
