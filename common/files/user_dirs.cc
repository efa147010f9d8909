#include "common/files/user_dirs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>

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

std::string PerUserTmpDir(std::string_view prefix, const std::string& base) {
  const std::string dir =
      base + "/" + std::string(prefix) + "-" + std::to_string(getuid());
  mkdir(dir.c_str(), 0700);  // or it exists: checked below either way
  struct stat made;
  if (lstat(dir.c_str(), &made) != 0 || !S_ISDIR(made.st_mode) ||
      made.st_uid != getuid()) {
    return "";
  }
  // Writable by anyone: what another user may have planted in it stays
  // untrusted. Group-writable only (earlier versions made it under the
  // umask, 0775 with Debian's 002, the group the user's own): made private.
  if ((made.st_mode & S_IWOTH) != 0) return "";
  if ((made.st_mode & S_IWGRP) != 0 && chmod(dir.c_str(), 0700) != 0) {
    return "";
  }
  return dir;
}

}  // namespace phaseloop::files
