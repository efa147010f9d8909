#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_WRITER_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_WRITER_H_

// Writing decision records to the local spool directory: one file per
// wrapper process, `<unix_ms>-<pid>-<random>.decisions`, holding one
// serialized phaseloop.v1.DecisionBatch, written to a temporary name and
// renamed, so a reader sees whole files or nothing. Never the network.
//
// Standard library only, for the launcher: it encodes its small
// pass-through records by hand in protobuf's wire format (field numbers of
// proto/phaseloop/v1/decision.proto; a test parses them with the generated
// class).

#include <cstdint>
#include <string>

#include "compiler_driver/cc_wrapper/spool_space.h"  // kSpoolSuffix, the cap

namespace phaseloop::cc_wrapper {

// Values of phaseloop.v1.DecisionOutcome.
enum class Outcome {
  kOptimized = 1,
  kPassThrough = 2,
  kFailOpen = 3,
  kDisabled = 4,
  kPolicyNotApplied = 5
};

// 32 hex digits from /dev/urandom (time and pid if that fails).
std::string NewDecisionId();

int64_t UnixTimeMs();

// The fields the launcher knows when it hands a command to plain clang.
struct LauncherRecord {
  Outcome outcome = Outcome::kPassThrough;
  std::string reason;
  std::string detail;
  std::string build_id;
  std::string source;  // the one source the command names, or ""
};

// A DecisionBatch holding one Decision with decision_id, outcome, reason,
// detail, build_id, source (when known) and unix_time_ms set.
std::string EncodeLauncherBatch(const LauncherRecord& record);

// How many records a batch holds and the spool's cap (spool_space.h;
// 0 = no cap).
struct SpoolWriteOptions {
  int records = 1;
  int64_t max_size = kDefaultSpoolMaxSize;
};

// Creates `dir` (and parents) if needed and writes `batch` as a new spool
// file, within the cap (spool_space.h: the oldest shipped files make room;
// a spool full of unshipped records drops this batch and counts it). False
// with `error` set when it cannot; callers in the compile path ignore that
// (a lost record never fails a build; a dropped one is counted).
bool WriteSpoolFile(const std::string& dir, const std::string& batch,
                    std::string* error, const SpoolWriteOptions& options = {});

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_WRITER_H_
