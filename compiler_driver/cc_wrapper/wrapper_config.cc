#include "compiler_driver/cc_wrapper/wrapper_config.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compiler_driver/cc_wrapper/spool_space.h"

namespace phaseloop::cc_wrapper {
namespace {

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

bool ParseTimeout(const std::string& text, int* out) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  *out = std::atoi(text.c_str());
  return *out > 0;
}

bool ParseBool(const std::string& text, bool* out) {
  if (text == "1" || text == "true" || text == "yes") {
    *out = true;
    return true;
  }
  if (text == "0" || text == "false" || text == "no" || text.empty()) {
    *out = false;
    return true;
  }
  return false;
}

constexpr char kFallbackSpoolPrefix[] = "phaseloop-spool";

std::string DefaultConfigPath(const EnvLookup& env) {
  return files::UserDir(files::UserDirKind::kConfig, "cc.conf", env);
}

std::string DefaultSpoolDir(const EnvLookup& env) {
  // Bazel runs actions without HOME: the password file's home, else a
  // per-user directory under /tmp.
  const std::string dir = files::UserCacheDir("spool", env);
  return dir.empty() ? files::PerUserTmpDir(kFallbackSpoolPrefix) : dir;
}

// Applies the file at `path` to `config`. A missing file is not an error
// unless it was named explicitly.
bool ApplyConfigFile(const std::string& path, bool must_exist,
                     WrapperConfig* config, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    if (!must_exist) return true;
    *error = "cannot read the config file '" + path +
             "' named by PHASELOOP_CONFIG; create it or unset the variable";
    return false;
  }
  config->config_path = path;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string text = Trim(line.substr(0, line.find('#')));
    if (text.empty()) continue;
    size_t eq = text.find('=');
    std::string where = path + ":" + std::to_string(number) + ": ";
    if (eq == std::string::npos) {
      *error = where + "expected 'key = value', got '" + text + "'";
      return false;
    }
    std::string key = Trim(text.substr(0, eq));
    std::string value = Trim(text.substr(eq + 1));
    if (key == "policy") {
      config->policy = value;
      config->policy_given = true;
    } else if (key == "spool_dir") {
      if (!value.empty() && value.front() != '/') {
        *error = where +
                 "spool_dir must be an absolute path (each compile would "
                 "resolve it against its own directory), got '" +
                 value + "'";
        return false;
      }
      config->spool_dir = value;
    } else if (key == "max_size") {
      if (!ParseSize(value, &config->spool_max_size)) {
        *error = where +
                 "max_size must be bytes or a size such as 64Mi, 500M or "
                 "1G (0: no cap), got '" +
                 value + "'";
        return false;
      }
    } else if (key == "timeout_ms") {
      if (!ParseTimeout(value, &config->timeout_ms)) {
        *error = where +
                 "timeout_ms must be a positive number of "
                 "milliseconds, got '" +
                 value + "'";
        return false;
      }
    } else if (key == "clang") {
      config->clang = value;
    } else if (key == "clangxx") {
      config->clangxx = value;
    } else if (key == "trust_file") {
      config->trust_file = value;
    } else if (key == "disable") {
      if (!ParseBool(value, &config->disabled)) {
        *error = where + "disable must be 0 or 1, got '" + value + "'";
        return false;
      }
    } else {
      *error = where + "unknown key '" + key +
               "' (known: policy, spool_dir, max_size, timeout_ms, clang, "
               "clangxx, disable, trust_file)";
      return false;
    }
  }
  return true;
}

}  // namespace

std::string FallbackSpoolDir() {
  return std::string("/tmp/") + kFallbackSpoolPrefix + "-" +
         std::to_string(getuid());
}

bool LoadWrapperConfig(const std::string& policy_flag, const EnvLookup& env,
                       WrapperConfig* config, std::string* error) {
  *config = WrapperConfig();
  bool ok = true;
  auto explicit_path = env("PHASELOOP_CONFIG");
  std::string path = explicit_path ? *explicit_path : DefaultConfigPath(env);
  if (!path.empty()) {
    ok = ApplyConfigFile(path, explicit_path.has_value(), config, error);
  }
  // A value the wrapper cannot read is config_invalid (plain clang runs,
  // the record says why), as the same value in cc.conf is: it was ignored
  // without a word (PHASELOOP_TIMEOUT_MS=abc ran with the default limit).
  // An empty value is no value.
  auto invalid = [&](const char* name, const std::string& value,
                     const char* expected) {
    if (ok) {
      *error = std::string("$") + name + "='" + value + "': " + expected;
      ok = false;
    }
  };
  if (auto v = env("PHASELOOP_DISABLE")) {
    bool disabled = false;
    if (ParseBool(*v, &disabled)) {
      config->disabled = disabled;
    } else {
      invalid("PHASELOOP_DISABLE", *v, "expected 0 or 1");
    }
  }
  if (auto v = env("PHASELOOP_POLICY"); v && !v->empty()) {
    config->policy = *v;
    config->policy_given = true;
  }
  if (auto v = env("PHASELOOP_SPOOL"); v && !v->empty()) {
    // Each compile would resolve a relative one against its own working
    // directory: records scattered over the source tree. The record of
    // this refusal goes to the default spool.
    if (v->front() == '/') {
      config->spool_dir = *v;
    } else {
      invalid("PHASELOOP_SPOOL", *v,
              "expected an absolute path (each compile would resolve a "
              "relative one against its own directory)");
    }
  }
  if (auto v = env("PHASELOOP_TRUST_FILE"); v && !v->empty()) {
    config->trust_file = *v;
  }
  if (auto v = env("PHASELOOP_SPOOL_MAX_SIZE"); v && !v->empty()) {
    int64_t size = 0;
    if (ParseSize(*v, &size)) {
      config->spool_max_size = size;
    } else {
      invalid("PHASELOOP_SPOOL_MAX_SIZE", *v,
              "expected bytes or a size such as 64Mi, 500M or 2G (0: no cap)");
    }
  }
  if (auto v = env(kOutcomeCacheMaxSizeEnv); v && !v->empty()) {
    int64_t size = 0;
    if (!ParseSize(*v, &size) || size <= 0) {
      invalid(kOutcomeCacheMaxSizeEnv, *v,
              "expected a size > 0 such as 16Mi, 500k or 1048576 bytes");
    }
  }
  if (auto v = env("PHASELOOP_BUILD_ID")) config->build_id = *v;
  if (auto v = env("PHASELOOP_TIMEOUT_MS"); v && !v->empty()) {
    int timeout = 0;
    if (ParseTimeout(*v, &timeout)) {
      config->timeout_ms = timeout;
    } else {
      invalid("PHASELOOP_TIMEOUT_MS", *v,
              "expected a positive number of milliseconds");
    }
  }
  if (auto v = env("PHASELOOP_COUNT_EXECUTED"); v && !v->empty()) {
    bool count = false;
    if (ParseBool(*v, &count)) {
      config->count_executed = count;
    } else {
      invalid("PHASELOOP_COUNT_EXECUTED", *v, "expected 0 or 1");
    }
  }
  if (!policy_flag.empty()) {
    config->policy = policy_flag;
    config->policy_given = true;
  }
  if (config->spool_dir.empty()) config->spool_dir = DefaultSpoolDir(env);
  if (config->build_id.empty()) {
    // Build systems that strip the environment (Bazel) can leave the id in
    // the spool directory instead: CI writes it there before the build.
    std::ifstream in(config->spool_dir + "/BUILD_ID");
    std::string line;
    if (in && std::getline(in, line)) config->build_id = Trim(line);
  }
  return ok;
}

}  // namespace phaseloop::cc_wrapper
