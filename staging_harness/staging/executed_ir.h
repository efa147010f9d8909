#ifndef PHASELOOP_STAGING_HARNESS_STAGING_EXECUTED_IR_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_EXECUTED_IR_H_

// Executed IR instructions of a workload's program, the staging harness's
// deterministic secondary metric beside the time (staging_harness/README.md
// "Executed IR instructions"): a counting build's processes each append
// "<pid> <count>\n" to the file their run command names
// (compiler_driver/instrumentation/executed_count.h); the workload's count
// is the sum over every line of every run command. What makes the figure
// unavailable (never a wrong number): a translation unit the wrapper did not
// compile in process (its code is not counted), a run command that left no
// line (its program ended by _exit or a signal, or it ran no counted
// program), a line that does not parse.

#include <cstdint>
#include <string>
#include <vector>

#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::staging {

struct ExecutedIr {
  bool available = false;
  int64_t count = 0;        // summed over every process of every run command
  int processes = 0;        // lines read
  std::string unavailable;  // why, when !available
};

// Why a counting build's decisions leave code uncounted ("" when every
// C/C++ compile ran in process): a fallback to plain clang, the wrapper
// disabled, a compile it passes through (-O0, an unknown option, -S, ...),
// or no compile in process at all. Links, preprocessing and hand-written
// assembly (no IR) do not count against it; a one-step compile-and-link
// command's sources are not counted and cannot be told from a link.
std::string UncountedUnits(const std::vector<v1::Decision>& decisions);

// Adds one run command's counts file (`text`, from `run`) to `total`; marks
// it unavailable, naming the run, when the file holds no line or one that
// is not "<pid> <count>".
void AddExecutedCounts(const std::string& run, const std::string& text,
                       ExecutedIr* total);

// baseline.count / candidate.count (> 1: the candidate executes fewer IR
// instructions); 0 when either is unavailable or zero.
double ExecutedIrRatio(const ExecutedIr& baseline, const ExecutedIr& candidate);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_EXECUTED_IR_H_
