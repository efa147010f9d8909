#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_BAZEL_TOOLCHAIN_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_BAZEL_TOOLCHAIN_H_

// Generates a Bazel (4.2.3) C/C++ toolchain package whose compiler is
// phaseloop-cc, for `phaseloop toolchain bazel`. The package holds three
// files:
//   BUILD          cc_toolchain_suite `toolchain` (cpu k8), built on
//                  @bazel_tools//tools/cpp:unix_cc_toolchain_config.bzl with
//                  the flags of Bazel's auto-configured clang toolchain, plus
//                  --phaseloop-policy=<package>/policy on every compile;
//   cc_wrapper.sh  Bazel's `gcc` tool: sets PHASELOOP_SPOOL (Bazel strips the
//                  environment) and execs phaseloop-cc; plain clang-16 if
//                  phaseloop-cc has gone missing;
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
  // absolute.
  std::string spool_dir;
  // topk's outcome cache (outcome_cache.h), which Bazel's actions (run
  // without HOME) find through cc_wrapper.sh. Empty: $XDG_CACHE_HOME/
  // phaseloop/outcomes, else $HOME/.cache/phaseloop/outcomes (the
  // wrapper's own default), else (neither set) `outcomes` beside the spool
  // directory; "off": no cache. Created; made absolute.
  std::string outcome_cache_dir;
  // Asked for its builtin include directories; run if phaseloop-cc is gone.
  std::string clang = "clang-16";
};

// What was written, for telling the user how to use it.
struct BazelToolchain {
  std::string package;            // workspace-relative, e.g. "tools/phaseloop"
  std::string crosstool_top;      // "//tools/phaseloop:toolchain"
  std::string policy_path;        // absolute path of <out_dir>/policy
  std::string spool_dir;          // absolute
  std::string outcome_cache_dir;  // absolute; "" = off
  std::string trust_path;         // absolute path of <out_dir>/trust; "" = none
  bool artifact_signed = false;   // a policy.plpolicy.sig was copied
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
