#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_BAZEL_TOOLCHAIN_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_BAZEL_TOOLCHAIN_H_

// Generates a Bazel (4.2.3) C/C++ toolchain package whose compiler is
// phaseloop-cc, for `phaseloop toolchain bazel`. The package holds three
// files:
//   BUILD          cc_toolchain_suite `toolchain` (cpu k8), built on
//                  @bazel_tools//tools/cpp:unix_cc_toolchain_config.bzl with
//                  the flags of Bazel's auto-configured clang toolchain, plus
//                  --phaseloop-policy=<package>/policy on every compile;
//   cc_wrapper.sh  Bazel's `gcc` tool: execs phaseloop-cc, setting
//                  PHASELOOP_SPOOL and PHASELOOP_OUTCOME_CACHE only where
//                  they are not phaseloop-cc's own defaults in an action
//                  (Bazel strips the environment; phaseloop-cc then reads
//                  the password file's home: files::UserCacheDir), so users
//                  who keep the defaults get the same file and the same
//                  action keys; fails if phaseloop-cc has gone missing;
//   policy         the policy spec. It is an input of every compile action,
//                  so its content is part of each action key: editing it
//                  recompiles, leaving it alone keeps every object cached;
//   policy.plpolicy  with an artifact (by default the shipped policy): a
//                  copy of it, which `policy` names
//                  (artifact:policy.plpolicy?mode=topk&k=4&budget=10000);
//                  every *.plpolicy of the package is a compile input too;
//   policy.plpolicy.sig  the artifact's detached signature, copied from
//                  beside it (common/signing/signature.h);
//   trust          with a trust file: a copy of it, which cc_wrapper.sh
//                  names in PHASELOOP_TRUST_FILE, so compiles run only
//                  artifacts it accepts (policy_runtime/artifact_trust.h;
//                  anything else fails open to plain clang). The signature
//                  and the trust file are compile inputs too.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/files/user_dirs.h"

namespace phaseloop::cc_wrapper {

struct BazelToolchainOptions {
  // The package directory to write (created if missing). Must lie inside a
  // Bazel workspace (a WORKSPACE or WORKSPACE.bazel file above it). A BUILD
  // file already there that this generator did not write is an error.
  std::string out_dir;
  // phaseloop-cc; phaseloop-cc-opt must be in the same directory. Made
  // absolute; Bazel actions run it by this path.
  std::string cc;
  // Copied to <out_dir>/policy. Empty: `artifact_file` if set, else an
  // existing <out_dir>/policy is kept, else one containing `baseline` is
  // written.
  std::string policy_file;
  // A policy artifact (.plpolicy), copied to <out_dir>/policy.plpolicy and
  // run in topk mode by the policy file written beside it. Ignored when
  // policy_file is set. The caller checks the artifact (policy_runtime).
  std::string artifact_file;
  // A trust file, validated and copied to <out_dir>/trust. Empty: an
  // existing <out_dir>/trust is kept (trust never lapses by omission).
  std::string trust_file;
  // Where decision records go. Empty: $XDG_CACHE_HOME/phaseloop/spool, else
  // $HOME/.cache/phaseloop/spool (the wrapper's own default). Created; made
  // absolute. Named in cc_wrapper.sh only when it is not the directory
  // phaseloop-cc finds itself in an action (under `passwd_home`).
  std::string spool_dir;
  // topk's outcome cache (outcome_cache.h), which Bazel's actions (run
  // without HOME) find through cc_wrapper.sh. Empty: $XDG_CACHE_HOME/
  // phaseloop/outcomes, else $HOME/.cache/phaseloop/outcomes (the
  // wrapper's own default), else (neither set) `outcomes` beside the spool
  // directory; "off": no cache. Created; made absolute; named in
  // cc_wrapper.sh as the spool is.
  std::string outcome_cache_dir;
  // Asked for its builtin include directories; run if phaseloop-cc is gone.
  std::string clang = "clang-16";
  // The user's environment (the defaults above) and the home directory
  // phaseloop-cc falls back to in an action, which has no environment
  // (files::OwnPasswdHome). Tests pass made-up ones.
  files::EnvLookup environment = files::ProcessEnvironment();
  std::string passwd_home = files::OwnPasswdHome();
};

// What was written, for telling the user how to use it.
struct BazelToolchain {
  std::string package;            // workspace-relative, e.g. "tools/phaseloop"
  std::string crosstool_top;      // "//tools/phaseloop:toolchain"
  std::string policy_path;        // absolute path of <out_dir>/policy
  std::string spool_dir;          // absolute
  std::string outcome_cache_dir;  // absolute; "" = off
  // Each set in cc_wrapper.sh (false: phaseloop-cc's own default in an
  // action is this directory, and the script leaves it out).
  bool spool_in_script = false;
  bool outcome_cache_in_script = false;
  // Paths cc_wrapper.sh names that are this user's own — under the home, or
  // a cache directory the user's environment moved (XDG_CACHE_HOME): the
  // script, an input of every compile action, is then this user's own, and
  // users sharing a remote cache get different action keys.
  std::vector<std::string> per_user_paths;
  std::string trust_path;        // absolute path of <out_dir>/trust; "" = none
  bool artifact_signed = false;  // a policy.plpolicy.sig was copied
  std::vector<std::string> bazelrc_lines;  // for the workspace's .bazelrc
};

// Files are replaced atomically (temp file + rename), so a failure leaves
// each one either old or new. Errors name the input and the fix: bad input is
// InvalidArgument / NotFound / FailedPrecondition / PermissionDenied,
// anything else is internal.
absl::StatusOr<BazelToolchain> WriteBazelToolchain(
    const BazelToolchainOptions& options);

// The directories of the `#include <...>` search list in the output of
// `clang -E -v`, lexically normalised ("/usr/bin/../include" ->
// "/usr/include"), in order.
std::vector<std::string> ParseIncludeSearchList(const std::string& output);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_BAZEL_TOOLCHAIN_H_
