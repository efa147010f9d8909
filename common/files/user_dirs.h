#ifndef PHASELOOP_COMMON_FILES_USER_DIRS_H_
#define PHASELOOP_COMMON_FILES_USER_DIRS_H_

// The user's phaseloop directories, by the XDG base directory rules: the one
// place that reads XDG_CACHE_HOME / XDG_CONFIG_HOME / XDG_STATE_HOME and HOME
// for them. Every stage's default cache, config and state paths come from
// here, so a user who moves XDG_CACHE_HOME moves all of phaseloop's caches.
// Each caller decides what to do when neither variable is set (Bazel runs
// actions without HOME): a per-user /tmp directory, an error naming its flag.
// Standard library only: phaseloop-cc's launcher links it.

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
