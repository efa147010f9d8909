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

namespace phaseloop::cc_wrapper {

// Values of phaseloop.v1.DecisionOutcome.
enum class Outcome {
  kOptimized = 1,
  kPassThrough = 2,
  kFailOpen = 3,
  kDisabled = 4
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
};

// A DecisionBatch holding one Decision with decision_id, outcome, reason,
// detail, build_id and unix_time_ms set.
std::string EncodeLauncherBatch(const LauncherRecord& record);

// Creates `dir` (and parents) if needed and writes `batch` as a new spool
// file. False with `error` set when it cannot; callers in the compile path
// ignore that (a lost record never fails a build).
bool WriteSpoolFile(const std::string& dir, const std::string& batch,
                    std::string* error);

// Suffix of complete spool files.
inline constexpr char kSpoolSuffix[] = ".decisions";

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_WRITER_H_
