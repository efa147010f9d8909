#include "common/files/user_dirs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

namespace phaseloop::files {

EnvLookup ProcessEnvironment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

EnvLookup FixedEnvironment(std::map<std::string, std::string> vars) {
  return
      [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
      };
}

std::string UserDir(UserDirKind kind, std::string_view name,
                    const EnvLookup& env) {
  const char* xdg_variable = "XDG_CACHE_HOME";
  const char* under_home = "/.cache";
  switch (kind) {
    case UserDirKind::kCache:
      break;
    case UserDirKind::kConfig:
      xdg_variable = "XDG_CONFIG_HOME";
      under_home = "/.config";
      break;
    case UserDirKind::kState:
      xdg_variable = "XDG_STATE_HOME";
      under_home = "/.local/state";
      break;
  }
  std::string base;
  if (std::optional<std::string> xdg = env(xdg_variable);
      xdg && !xdg->empty()) {
    base = *xdg + "/phaseloop";
  } else if (std::optional<std::string> home = env("HOME");
             home && !home->empty()) {
    base = *home + under_home + "/phaseloop";
  } else {
    return "";
  }
  return name.empty() ? base : base + "/" + std::string(name);
}

std::string PasswdHome(uid_t account, uid_t owner, const std::string& passwd) {
  std::ifstream in(passwd);
  std::string line;
  const std::string wanted = std::to_string(account);
  while (std::getline(in, line)) {
    // name:password:uid:gid:gecos:home:shell
    std::vector<std::string_view> fields;
    std::string_view rest = line;
    for (size_t colon; (colon = rest.find(':')) != std::string_view::npos;) {
      fields.push_back(rest.substr(0, colon));
      rest.remove_prefix(colon + 1);
    }
    fields.push_back(rest);
    if (fields.size() != 7 || fields[2] != wanted) continue;
    const std::string home(fields[5]);
    struct stat st;
    if (home.empty() || home.front() != '/' || stat(home.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != owner) {
      return "";
    }
    return home;
  }
  return "";
}

uid_t OutsideUid(uid_t inside, std::string_view uid_map) {
  std::istringstream lines{std::string(uid_map)};
  uint64_t first_inside = 0, first_outside = 0, count = 0;
  while (lines >> first_inside >> first_outside >> count) {
    if (inside >= first_inside && inside - first_inside < count) {
      return static_cast<uid_t>(first_outside + (inside - first_inside));
    }
  }
  return inside;
}

const std::string& OwnPasswdHome() {
  static const std::string* home = [] {
    std::ifstream in("/proc/self/uid_map");
    std::ostringstream uid_map;
    uid_map << in.rdbuf();
    return new std::string(
        PasswdHome(OutsideUid(getuid(), uid_map.str()), getuid()));
  }();
  return *home;
}

std::string UserCacheDir(std::string_view name, const EnvLookup& env,
                         const std::string& home) {
  std::string dir = UserDir(UserDirKind::kCache, name, env);
  if (dir.empty() && !home.empty()) {
    dir =
        UserDir(UserDirKind::kCache, name, FixedEnvironment({{"HOME", home}}));
  }
  return dir;
}

std::string UserCacheDir(std::string_view name, const EnvLookup& env) {
  std::string dir = UserDir(UserDirKind::kCache, name, env);
  return dir.empty() ? UserCacheDir(name, env, OwnPasswdHome()) : dir;
}

namespace {

// The mode of `path` when it is a directory (not a link) this user owns.
std::optional<mode_t> OwnDirectoryMode(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != getuid()) {
    return std::nullopt;
  }
  return st.st_mode;
}

}  // namespace

bool IsOwnPrivateDir(const std::string& path) {
  const std::optional<mode_t> mode = OwnDirectoryMode(path);
  return mode && (*mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::string PerUserTmpDir(std::string_view prefix, const std::string& base) {
  const std::string dir =
      base + "/" + std::string(prefix) + "-" + std::to_string(getuid());
  mkdir(dir.c_str(), 0700);  // or it exists: checked below either way
  const std::optional<mode_t> mode = OwnDirectoryMode(dir);
  // Writable by anyone: what another user may have planted in it stays
  // untrusted. Group-writable only (earlier versions made it under the
  // umask, 0775 with Debian's 002, the group the user's own): made private.
  if (!mode || (*mode & S_IWOTH) != 0) return "";
  if ((*mode & S_IWGRP) != 0 && chmod(dir.c_str(), 0700) != 0) return "";
  return dir;
}

}  // namespace phaseloop::files
