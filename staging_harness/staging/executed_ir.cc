#include "staging_harness/staging/executed_ir.h"

#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "staging_harness/staging/build_probes.h"

namespace phaseloop::staging {

namespace {

// Pass-through commands that compile no C/C++ to an object: a link, a
// query, preprocessing, dependencies, hand-written assembly (no IR to
// count, by the metric's definition).
bool CompilesNoIr(const v1::Decision& d) {
  static const char* const kReasons[] = {
      "not_compile_only", "preprocess_only", "dependencies_only",
      "syntax_only",      "no_source_input", "non_source_input"};
  if (d.outcome() != v1::PASS_THROUGH) return false;
  for (const char* reason : kReasons) {
    if (d.reason() == reason) return true;
  }
  return false;
}

}  // namespace

std::string UncountedUnits(const std::vector<v1::Decision>& decisions) {
  std::map<std::string, int> reasons;
  int uncounted = 0, in_process = 0;
  for (const v1::Decision& d : decisions) {
    if (d.outcome() == v1::OPTIMIZED || d.outcome() == v1::POLICY_NOT_APPLIED) {
      ++in_process;
      continue;
    }
    // A build system's probe (CMake's ABI check compiles a file of its own
    // with -v, which the wrapper leaves to clang, before every configure)
    // is not the program's code: left in, no CMake workload had a count.
    // A unit of the program compiled with -v is (named below).
    if (CompilesNoIr(d) || IsProbeOrQuery(d)) continue;
    ++uncounted;
    ++reasons[d.reason().empty() ? v1::DecisionOutcome_Name(d.outcome())
                                 : d.reason()];
  }
  if (uncounted == 0 && in_process == 0) {
    return "no translation unit of the counting build was compiled in "
           "process (a one-step compile-and-link build?): nothing is counted";
  }
  if (uncounted == 0) return "";
  std::string why;
  for (const auto& [reason, n] : reasons) {
    absl::StrAppend(&why, why.empty() ? "" : ", ", reason, " ", n);
  }
  return absl::StrCat(uncounted,
                      " compile commands of the counting build ran plain "
                      "clang (",
                      why, "): their code is not counted");
}

void AddExecutedCounts(const std::string& run, const std::string& text,
                       ExecutedIr* total) {
  if (!total->unavailable.empty()) return;
  int lines = 0;
  for (absl::string_view line :
       absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t pid = 0, count = 0;
    if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &pid) ||
        !absl::SimpleAtoi(fields[1], &count) || count < 0) {
      total->available = false;
      total->unavailable = absl::StrCat("run '", run, "' wrote a count line '",
                                        line, "' that is not '<pid> <count>'");
      return;
    }
    total->count += count;
    ++lines;
  }
  if (lines == 0) {
    total->available = false;
    total->unavailable = absl::StrCat(
        "run '", run,
        "' wrote no count: its program ended by _exit or a signal (which "
        "skip the destructor that writes it), or it ran no program of the "
        "counting build");
    return;
  }
  total->processes += lines;
  total->available = true;
}

double ExecutedIrRatio(const ExecutedIr& baseline,
                       const ExecutedIr& candidate) {
  if (!baseline.available || !candidate.available || baseline.count <= 0 ||
      candidate.count <= 0) {
    return 0;
  }
  return static_cast<double>(baseline.count) /
         static_cast<double>(candidate.count);
}

}  // namespace phaseloop::staging
