#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_WRAPPER_CONFIG_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_WRAPPER_CONFIG_H_

// Settings of phaseloop-cc, from (highest first) its own flags, the
// environment, a config file, and defaults. Standard library only: the
// launcher links this and must start in about a millisecond.
//
// Environment: PHASELOOP_DISABLE=1 (kill switch), PHASELOOP_POLICY,
// PHASELOOP_SPOOL, PHASELOOP_SPOOL_MAX_SIZE, PHASELOOP_BUILD_ID,
// PHASELOOP_TIMEOUT_MS, PHASELOOP_TRUST_FILE, PHASELOOP_CONFIG,
// PHASELOOP_OUTCOME_CACHE_MAX_SIZE (read by the outcome cache; checked here)
// (config file path; default $XDG_CONFIG_HOME/phaseloop/cc.conf, else
// ~/.config/phaseloop/cc.conf; none when neither is set: a Bazel action,
// whose inputs a config file is not), PHASELOOP_COUNT_EXECUTED.
//
// Spool: PHASELOOP_SPOOL, else spool_dir, else $XDG_CACHE_HOME/phaseloop/
// spool, else ~/.cache/phaseloop/spool (without HOME: the password file's
// home, files::UserCacheDir), else /tmp/phaseloop-spool-<uid>.
//
// Config file: `key = value` lines, `#` comments. Keys: policy, spool_dir,
// max_size (the spool's cap, spool_space.h: "64Mi", "1G", 0 = none),
// timeout_ms, clang, clangxx, disable (0/1), trust_file (policy_runtime/
// artifact_trust.h: artifacts must then be signed by a key it lists). A
// value in the environment or the file that does not parse is an error
// naming it (the compile then steps aside as config_invalid).
//
// Build id: PHASELOOP_BUILD_ID, else the first line of <spool_dir>/BUILD_ID
// (for build systems that strip the environment, like Bazel: putting the id
// in the action environment would change every action key).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/files/user_dirs.h"

namespace phaseloop::cc_wrapper {

// The outcome cache's size cap (outcome_cache.h): a size > 0.
inline constexpr char kOutcomeCacheMaxSizeEnv[] =
    "PHASELOOP_OUTCOME_CACHE_MAX_SIZE";

struct WrapperConfig {
  bool disabled = false;
  std::string policy = "baseline";  // a policy spec, see policy.h
  // True when a flag, the environment or the config file named the policy;
  // false: the optimizer may use the shipped default policy instead.
  bool policy_given = false;
  std::string spool_dir;  // decision records, one file per process
  int64_t spool_max_size = int64_t{64} << 20;  // bytes; 0 = no cap
  std::string build_id;
  int timeout_ms = 120000;  // per translation unit, passes + codegen
  std::string clang = "clang-16";
  std::string clangxx = "clang++-16";
  std::string config_path;  // the file read, empty when none
  // The trust file policy artifacts are checked against; "" = none (every
  // artifact runs). An artifact it does not accept fails open.
  std::string trust_file;
  // PHASELOOP_COUNT_EXECUTED=1: instrument every object to count executed IR
  // instructions (compiler_driver/instrumentation/executed_count.h). A lab
  // setting, from the environment only (no config file key, nothing a
  // policy carries); it changes the object, so any cache of objects must
  // key on it.
  bool count_executed = false;
};

// Reads an environment variable; nullopt when unset.
using EnvLookup = files::EnvLookup;
using files::ProcessEnvironment;

// The spool when no home directory is found: /tmp/phaseloop-spool-<uid>
// (files::PerUserTmpDir; named here, not created).
std::string FallbackSpoolDir();

// `policy_flag` is --phaseloop-policy (empty: not given). A config file that
// exists but cannot be parsed is an error (returned, with `config` holding
// the defaults and environment); the wrapper then fails open.
bool LoadWrapperConfig(const std::string& policy_flag, const EnvLookup& env,
                       WrapperConfig* config, std::string* error);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_WRAPPER_CONFIG_H_
