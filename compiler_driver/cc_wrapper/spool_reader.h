#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_READER_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_READER_H_

// Reading the decision spool that phaseloop-cc writes (spool_writer.h):
// every complete `*.decisions` file (not shipped yet), and on request the
// `*.shipped` ones kept for stats (spool_space.h), parsed. Files being
// written (`*.tmp`) are not looked at; files that do not parse are listed,
// not deleted.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::cc_wrapper {

struct SpoolFile {
  std::string path;
  v1::DecisionBatch batch;
  bool shipped = false;  // a `*.shipped` file
};

struct SpoolContents {
  std::vector<SpoolFile> files;      // sorted by name (= by time)
  std::vector<std::string> corrupt;  // paths that did not parse
};

// A missing directory is an empty spool.
absl::StatusOr<SpoolContents> ReadSpool(const std::string& dir,
                                        bool with_shipped = false);

// Reads one spool file (either suffix); InvalidArgument naming it when it
// cannot be read or is not a DecisionBatch.
absl::StatusOr<SpoolFile> ReadSpoolFile(const std::string& path);

// A note for a command reading the default spool `spool`: the fallback
// spool `fallback_dir` (/tmp/phaseloop-spool-<uid>) holds N unshipped
// record files — written by compiles that found no home directory (HOME
// unset and no password-file entry: a Bazel action of an account known only
// to a directory service) — and how to read them; "" when it holds none,
// is `spool`, or is not this user's own private directory (anyone may make
// a name in /tmp first).
std::string FallbackSpoolNote(const std::string& spool,
                              const std::string& fallback_dir);

// "optimized", "pass_through", "fail_open", "disabled",
// "policy_not_applied"; "outcome_N" for a value this build does not know.
std::string OutcomeName(v1::DecisionOutcome outcome);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_READER_H_
