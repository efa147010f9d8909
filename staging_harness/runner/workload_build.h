#ifndef PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_BUILD_H_
#define PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_BUILD_H_

// Building one variant of a workload: a fresh scratch copy of its source
// tree, its own build command run with CC/CXX set to the phaseloop wrapper
// and CFLAGS/CXXFLAGS to the level, the wrapper's policy chosen by
// PHASELOOP_POLICY and its decisions spooled to a directory of the variant's
// own (PHASELOOP_SPOOL, PHASELOOP_BUILD_ID), then the artifacts copied out
// and hashed. Two variants whose artifacts hash equal built the same
// program: the harness times it once.
//
// The build command also sees JOBS (the machine's cores, for `make -j$JOBS`)
// and PHASELOOP_STAGE_VARIANT (the variant's name), and, when the variant
// names one, PHASELOOP_OBJECT_CACHE (the wrapper's object cache,
// compiler_driver/cc_wrapper/object_cache.h: variants that share it reuse
// every object whose module, pipeline and settings are unchanged).

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/phaseloop/v1/decision.pb.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runner {

// The wrapper a workload is built with.
struct Compilers {
  std::string cc;   // phaseloop-cc, absolute
  std::string cxx;  // phaseloop-c++, absolute
};

// `cc_flag` (the command's --cc) when given; else $PHASELOOP_CC; else beside
// `exe_dir` (default: the running binary's directory; installed layout
// <exe_dir>/phaseloop-cc, bazel-bin layout
// <exe_dir>/../compiler_driver/cc_wrapper/phaseloop-cc); else PATH.
// phaseloop-c++ is looked up beside phaseloop-cc. FailedPrecondition lists
// what was tried and how to point at the wrapper.
absl::StatusOr<Compilers> FindCompilers(const std::string& cc_flag,
                                        const std::string& exe_dir = "");

// One way to build a workload.
struct Variant {
  std::string name;              // "baseline", "candidate", "O0", ...
  std::string policy;            // a PHASELOOP_POLICY spec (policy.h)
  std::string opt_level = "O3";  // CFLAGS=-<opt_level>
  std::string extra_cflags;      // appended to CFLAGS and CXXFLAGS
  // PHASELOOP_COUNT_EXECUTED=1 for the wrapper: every object it compiles in
  // process counts executed IR instructions
  // (compiler_driver/instrumentation/executed_count.h).
  bool count_executed = false;
  std::string object_cache_dir;  // PHASELOOP_OBJECT_CACHE; "" for none
  // Built with clang's frontend instrumentation for a profile
  // (staging_harness/profiling): every compile and link gets
  // -fprofile-instr-generate, through scripts CC and CXX then name (so
  // link lines that drop CFLAGS still link the profile runtime; the
  // compiles run plain clang). Programs the build itself runs write their
  // profiles under <work_dir>/build-profiles, not into the tree.
  bool profile_instrumented = false;
  // Added to every command of the build that links (one without -c, -S,
  // -E, -M, -MM, -fsyntax-only, their long forms or a query such as
  // --version or -print-...), after its own arguments, through
  // scripts CC and CXX then name: a link line that drops CFLAGS gets them
  // too, and compile lines are not given a flag they would warn about.
  // E.g. -fuse-ld=/usr/bin/ld.lld-16 for LLVM 16 bitcode under -flto.
  std::vector<std::string> link_flags;
};

struct BuiltVariant {
  Variant variant;
  std::string build_dir;      // the scratch copy the build ran in
  std::string artifacts_dir;  // artifacts at their relative paths
  // Content hash of every artifact's relative path and bytes.
  std::string artifacts_hash;
  std::string build_id;
  // The wrapper's decision per translation unit (from the variant's spool).
  std::vector<v1::Decision> decisions;
  double build_s = 0;
  std::string log_path;  // the build's stdout and stderr
  // Translation units the wrapper compiled in process: objects taken from
  // the object cache (decision object_cache "hit"), and the others.
  int objects_reused = 0;
  int objects_compiled = 0;
};

// Builds `variant` of `workload` from `source_tree` under `work_dir`
// (created; an existing one is replaced). A failed build (non-zero exit,
// timeout, a missing artifact) is FailedPrecondition naming the workload,
// the variant, the log and its last lines.
absl::StatusOr<BuiltVariant> BuildVariant(const workloads::Workload& workload,
                                          const std::string& source_tree,
                                          const Compilers& compilers,
                                          const Variant& variant,
                                          const std::string& work_dir,
                                          std::ostream& progress);

// The words of a flags option (`option`: --candidate-cflags, --link-flags),
// split at blanks: each must be a compiler flag, and none one the build's
// own commands or --opt-level set (-c, -S, -E, -o, -O..., -M...).
// InvalidArgument names the option, the word and `example`.
absl::StatusOr<std::vector<std::string>> FlagWords(absl::string_view option,
                                                   const std::string& flags,
                                                   absl::string_view example);

// Content hash over (relative path, bytes) of the files, in the given
// order. NotFound names a file that cannot be read.
absl::StatusOr<std::string> HashFiles(const std::string& root,
                                      const std::vector<std::string>& files);

}  // namespace phaseloop::runner

#endif  // PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_BUILD_H_
