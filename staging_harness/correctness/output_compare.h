#ifndef PHASELOOP_STAGING_HARNESS_CORRECTNESS_OUTPUT_COMPARE_H_
#define PHASELOOP_STAGING_HARNESS_CORRECTNESS_OUTPUT_COMPARE_H_

// Correctness before any timing (DESIGN.md): whether one run of a workload
// command produced what a reference run of the same command produced, under
// the workload's `Check` (staging_harness/workloads/workload.h).
//
// The comparison, in this order, stopping at the first difference:
//  1. timed_out: a run that timed out never matches (reference first).
//  2. exit_status: both runs must exit with check.exit_status.
//  3. stdout (when check.compare_stdout), then each of check.files in order.
//     Compare::kExact: byte equality, streamed in chunks (outputs of 100 MB
//     are fine). Compare::kNumeric: whitespace-separated tokens in order;
//     tokens that are both finite numbers in double's range (strtod reads
//     all of them; "nan", "inf" and out-of-range literals such as "1e999"
//     are compared as text) a (candidate) and b (reference, so the relative
//     tolerance scales with the expected value) match when a == b or
//     |a - b| <= max(absolute_tolerance, relative_tolerance * |b|); other
//     tokens must be equal (so "3.14," is not a number: separate numbers by
//     whitespace); both outputs must have as many tokens.
//     A declared file that one run did not write ("" or absent in `files`)
//     is a difference; one neither wrote is too (the check asks for it).
//
// Pure and thread-safe: reads the files, writes nothing.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::correctness {

// What one run of one command produced.
struct RunOutputs {
  int exit_status = 0;  // exit code, or 128 + signal
  int term_signal = 0;  // the signal that killed the run, else 0
  bool timed_out = false;
  std::string stdout_path;  // file holding its standard output
  // check.files name -> path of the copy ("" when the run did not write it).
  std::map<std::string, std::string> files;
};

// The first difference found. `what`: "timed_out", "exit_status", "stdout"
// or "file:<name>". `detail`: one short line naming the run and the first
// difference, e.g. "line 12: expected '3.14159', got '3.14160'" or, for
// binary output, "byte 4096: expected 0x3f, got 0x40".
struct Mismatch {
  std::string what;
  std::string detail;
};

// How the two runs are named in a Mismatch's detail ("the candidate run
// timed out").
struct RunNames {
  std::string reference = "reference";
  std::string candidate = "candidate";
};

// nullopt when `candidate` matches `reference` under `check`, the first
// Mismatch otherwise. Errors only when an output file cannot be read
// (NotFound / InvalidArgument naming the file and the run).
absl::StatusOr<std::optional<Mismatch>> CompareOutputs(
    const RunOutputs& reference, const RunOutputs& candidate,
    const workloads::Check& check, const RunNames& names = {});

}  // namespace phaseloop::correctness

#endif  // PHASELOOP_STAGING_HARNESS_CORRECTNESS_OUTPUT_COMPARE_H_
