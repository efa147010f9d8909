#ifndef PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_HOT_MODULES_H_
#define PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_HOT_MODULES_H_

// Where a workload's time goes, by translation unit: the baseline build's
// run commands run once under `perf record -e cpu-clock:u` (a software
// event, so it works on machines without a PMU, such as VMs, and for
// unprivileged users at kernel.perf_event_paranoid <= 2: user space of
// their own processes), every sample's symbol read back with `perf script`,
// and each symbol mapped to the translation units whose object defines it
// (`llvm-nm-16 --defined-only` on the objects the baseline's decisions name,
// found under its build directory). A module's share is its samples over
// the samples that landed in the program's own optimised code; samples in
// shared libraries (libc), the kernel or unknown code are counted apart.
//
// A symbol several units define (a `static` helper of the same name in two
// files) has its samples split evenly between them, and is counted.
// When perf cannot sample here, ProfileBaseline is FailedPrecondition
// saying why and what to change: hot modules are never guessed.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runtime_search {

// The samples of one profile by symbol.
struct SymbolSamples {
  int64_t total = 0;    // every sample read
  int64_t program = 0;  // in files under the program's run directory
  int64_t unknown = 0;  // of those, with no symbol ("[unknown]")
  std::map<std::string, int64_t> by_symbol;  // the program's, by symbol
};

// Parses `perf script -F ip,sym,dso` text ("<ip> <symbol> (<dso>)" per
// line). Samples whose DSO lies under `program_dir` are the program's.
SymbolSamples ParsePerfScript(absl::string_view text,
                              const std::string& program_dir);

// One optimised translation unit of a build and the text symbols its object
// defines.
struct UnitSymbols {
  std::string module_hash;
  std::string source;       // Decision.source
  std::string object_file;  // the object found under the build directory
  std::vector<std::string> symbols;
};

// The units of `built` whose decisions carry a module_hash (the ones a
// table policy can address), each with its object's defined text symbols.
// An object that cannot be found (or is ambiguous) under the build
// directory is left out with a line in `notes`. Fails when llvm-nm-16
// cannot run.
absl::StatusOr<std::vector<UnitSymbols>> UnitsOf(
    const runner::BuiltVariant& built, const std::string& nm,
    std::vector<std::string>* notes);

struct HotModule {
  std::string module_hash;
  std::string source;  // the first unit's source of this module
  double samples = 0;  // fractional where symbols were shared
  double share = 0;    // of Profile::attributed
  std::vector<std::pair<std::string, double>> top_symbols;  // up to 3
};

struct Profile {
  std::string method;  // how it was sampled, for the report
  int64_t total = 0;
  int64_t program = 0;
  int64_t unknown = 0;
  int64_t attributed = 0;  // samples mapped to some unit
  int ambiguous_symbols = 0;
  std::vector<HotModule> modules;  // by samples, descending; hash on ties
  std::vector<std::string> notes;
};

// Maps samples to units (pure).
Profile Attribute(const SymbolSamples& samples,
                  const std::vector<UnitSymbols>& units);

struct ProfileOptions {
  std::string work_dir;     // run directory and perf data (replaced)
  int frequency_hz = 2000;  // perf record -F
  // Passes over the run commands repeat until the program's samples reach
  // min_samples (short workloads), at most max_passes.
  int64_t min_samples = 1000;
  int max_passes = 5;
  std::string perf = "perf";  // the perf binary
  std::string nm = "llvm-nm-16";
};

// Runs each of the workload's commands once under perf in a run directory
// of `baseline` and attributes the samples. FailedPrecondition when perf
// cannot sample (the probe's output and what to change) or a command fails.
absl::StatusOr<Profile> ProfileBaseline(const workloads::Workload& workload,
                                        const runner::BuiltVariant& baseline,
                                        const runner::PreparedInputs& inputs,
                                        const ProfileOptions& options,
                                        std::ostream& progress);

// The modules to search: by share, until their shares sum to `coverage`
// or `max_modules` are chosen; modules with no samples are never hot.
std::vector<HotModule> HotSet(const Profile& profile, double coverage,
                              int max_modules);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_HOT_MODULES_H_
