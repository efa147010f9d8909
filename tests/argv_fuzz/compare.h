#ifndef PHASELOOP_TESTS_ARGV_FUZZ_COMPARE_H_
#define PHASELOOP_TESTS_ARGV_FUZZ_COMPARE_H_

// Comparing the two sides of a case: what differs, by kind.

#include <set>
#include <string>
#include <vector>

#include "tests/argv_fuzz/scratch_run.h"

namespace phaseloop::argv_fuzz {

// "What differs" kinds, as the allowlist names them.
// "stderr-order": the same stderr lines in another order.
constexpr const char* kKinds[] = {"exit",         "stdout", "stderr",
                                  "stderr-order", "files",  "bytes"};

struct Difference {
  std::set<std::string> kinds;
  std::string clang_stderr;  // normalised, for the allowlist's stderr-has=
  std::vector<std::string> details;
};

// What differs between clang's run and the wrapper's (both normalised with
// the scratch path and TMPDIR), with a readable detail per difference.
Difference Compare(const RunResult& clang, const RunResult& wrapper,
                   const std::string& scratch, const std::string& tmp);

}  // namespace phaseloop::argv_fuzz

#endif  // PHASELOOP_TESTS_ARGV_FUZZ_COMPARE_H_
