#ifndef PHASELOOP_STAGING_HARNESS_STAGING_STAGE_WORKLOAD_H_
#define PHASELOOP_STAGING_HARNESS_STAGING_STAGE_WORKLOAD_H_

// Staging one workload: correctness first, then timing.
//  1. Inputs made once; the baseline, the candidate and (unless the two
//     built byte-identical artifacts) an -O0 reference built through the
//     wrapper, each in a scratch copy of the sources.
//  2. Identical artifacts: the speedup is exactly 1; nothing is run.
//  3. The baseline runs twice: outputs that differ from run to run (or a
//     run that fails its check) make the workload unusable; the -O0
//     reference must give the baseline's outputs too (otherwise the program
//     depends on undefined behaviour or the optimiser: unusable). Then the
//     candidate: a mismatch is a miscompile (or, with `ubsan`, undefined
//     behaviour when an UBSan build of the baseline trips on the same
//     inputs). No timing is taken then; the (module_hash, pipeline) pairs
//     where the candidate's pipeline differs from the baseline's are blamed.
//  4. Interleaved timing (interleaved_timing.h); the reward is
//     log(t_baseline / t_candidate) of the median wall-time speedup, with
//     its interval.
//  5. With count_executed: counting builds of the baseline (once per
//     stager) and of the candidate, each run command once, their outputs
//     checked against the baseline's; executed IR instructions
//     (executed_ir.h) and their ratio beside the time.

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/phaseloop/v1/episode.pb.h"
#include "proto/phaseloop/v1/miscompile.pb.h"
#include "staging_harness/correctness/output_compare.h"
#include "staging_harness/profiling/bolt_optimization.h"
#include "staging_harness/runner/workload_build.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/staging/executed_ir.h"
#include "staging_harness/staging/interleaved_timing.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::staging {

struct StageOptions {
  std::string candidate_policy;              // PHASELOOP_POLICY spec
  std::string baseline_policy = "baseline";  // clang's pipeline for the level
  std::string opt_level = "O3";
  std::string work_dir;  // scratch: sources, builds, runs (replaced)
  runner::Compilers compilers;
  TimingOptions timing;
  int cpu = -1;  // pin every run to this CPU
  bool count_hardware = true;
  bool ubsan = false;  // tell undefined behaviour from a miscompile
  // Time byte-identical builds too (an A/A calibration: the baseline
  // against itself shows the machine's noise) instead of reporting them as
  // exactly 1.
  bool time_identical = false;
  // false: correctness only. A candidate that differs from the baseline and
  // gives its outputs is verdict kChecked, with no speed figure and no
  // reward (a smoke run's gate; see SpeedGateOptions::timed).
  bool time_candidate = true;
  // Step 5 (measured candidates only): two more builds and one pass each.
  bool count_executed = false;
  // The wrapper's object cache for every build (PHASELOOP_OBJECT_CACHE;
  // "" for none): units unchanged between the builds are compiled once.
  std::string object_cache_dir;
  // Appended to the candidate's CFLAGS/CXXFLAGS only (and its counting
  // build's): e.g. -fprofile-instr-use=FILE for a profile-guided candidate
  // (staging_harness/profiling). "" for none.
  std::string candidate_cflags;
  // Every build's link flags, both sides' and the -O0 reference's
  // (runner::Variant::link_flags): e.g. -fuse-ld=/usr/bin/ld.lld-16, which
  // LLVM 16 bitcode needs when the candidate is built with -flto.
  std::vector<std::string> link_flags;
  // StageWorkload: the candidate's artifacts rewritten by BOLT after its
  // build (profiling/bolt_optimization.h), from a profile of its own runs
  // (a stager's Evaluate takes its own); its links need
  // profiling::kBoltLinkFlag among link_flags. A mismatch is then checked again
  // on the build before BOLT: BOLT is blamed (cause "bolt", no pipeline) when
  // that one gives the baseline's outputs and UBSan (with `ubsan`) finds no
  // undefined behaviour. The baseline's checks run before BOLT. The executed IR
  // count (count_executed) is the build's before BOLT: BOLT changes machine
  // code, not IR.
  std::optional<profiling::BoltOptions> bolt;
};

enum class Verdict {
  kMeasured,    // timed: speedup with its interval
  kIdentical,   // byte-identical artifacts: speedup exactly 1
  kMiscompile,  // the candidate's outputs differ (no speed figure)
  kUnusable,    // the baseline cannot be checked (nondeterministic, UB)
  kChecked,     // outputs match the baseline's; not timed (time_candidate off)
  kTimedOut,    // the candidate ran past a time limit the baseline kept (no
                // speed figure; recorded like a miscompile, with cause
                // "timed_out", so its pairs are blocked)
};
const char* VerdictName(Verdict verdict);

// The first decision of `built` whose unit went to plain clang because the
// policy itself could not be used there (unreadable, refused, unsigned or
// untrusted: reasons policy_*); nullptr when none did. A policy that reaches
// no unit stages clang against clang: bad input, not a speedup of 1.
const v1::Decision* PolicyFallback(const runner::BuiltVariant& built);

// Why no policy could have acted on `built`'s program, from its decisions,
// or "": the build ran no command through phaseloop-cc (a Makefile that
// sets CC itself), the wrapper was switched off or misconfigured, it
// compiled no unit in process (one-step compile-and-link), or (opt_level
// not "") no unit was compiled at -`opt_level` (a Makefile's own CFLAGS).
// Staging then compares clang with clang: bad input, not "identical".
std::string WrapperNotReached(const runner::BuiltVariant& built,
                              const std::string& opt_level);

struct StageResult {
  std::string workload;
  std::string split;
  Verdict verdict = Verdict::kMeasured;
  // kUnusable for this candidate alone: its outputs differed once and not
  // again, the baseline's never (the workload is not known to be unusable;
  // a runtime search goes on without this candidate).
  bool unconfirmed = false;
  std::string detail;  // why, for miscompile/unusable; how it stopped
  runner::BuiltVariant baseline;
  runner::BuiltVariant candidate;
  std::optional<TimingResult> timing;  // kMeasured only
  // log(t_baseline / t_candidate) of the median and of the interval's ends
  // (0, 0, 0 for kIdentical).
  double reward = 0, reward_low = 0, reward_high = 0;
  // kMiscompile: what differed, on which run, and the verdict the UBSan
  // build gave ("miscompile", "undefined_behaviour" or "unknown" without
  // one; "bolt" when BOLT's rewrite changed the outputs); the pairs the
  // candidate changed (none when BOLT is blamed).
  std::optional<correctness::Mismatch> mismatch;
  std::string mismatch_run;
  std::string cause;
  std::vector<std::pair<std::string, std::string>> blamed;
  // Executed IR instructions (step 5; unset when not counted) and
  // baseline / candidate (0 when either is unavailable; 1 for kIdentical
  // when counting was asked for: the same binary executes the same).
  std::optional<ExecutedIr> baseline_executed;
  std::optional<ExecutedIr> candidate_executed;
  double executed_ir_ratio = 0;
  // kMeasured: what made the machine busy while it was timed
  // (BusyMachineWarnings); a figure taken then deserves a second run.
  std::vector<std::string> machine_warnings;
  // kMeasured: ShortRunsWarning, "" when the runs are long enough to time.
  std::string short_runs;
  // With StageOptions::bolt: what BOLT did to the candidate (whose
  // artifacts_dir and artifacts_hash are then BOLT's).
  std::optional<profiling::BoltResult> bolt;
  // Translation units the candidate build compiled, and how many ran the
  // candidate policy's pipeline (outcome OPTIMIZED); the others ran clang's
  // own (a one-step compile-and-link command, a level the policy does not
  // act at, a module not in its table, ...).
  int units = 0;
  int optimized_units = 0;
  double elapsed_s = 0;
};

// A workload prepared for staging many candidates against one baseline
// (runtime search evaluates dozens): the source resolved, the inputs made
// and the baseline built once; the baseline's checks (twice, and the -O0
// reference) run once, before the first candidate that differs from it.
class WorkloadStager {
 public:
  // Resolves the source, makes the inputs, builds the baseline
  // (options.candidate_policy is not used). FailedPrecondition (naming the
  // workload file) for a workload that cannot be built or run at all.
  static absl::StatusOr<std::unique_ptr<WorkloadStager>> Prepare(
      const workloads::Workload& workload, const StageOptions& options,
      std::ostream& progress);

  const runner::BuiltVariant& baseline() const { return baseline_; }
  // The inputs every run sees (made once by Prepare), e.g. for profiling
  // the baseline in a run directory of the caller's own.
  const runner::PreparedInputs& inputs() const;

  // Builds `candidate_policy` as variant `label` ("candidate" for
  // `phaseloop stage`; search uses one label per evaluation, each its own
  // scratch directory), rewrites it with `bolt` when given (StageOptions::
  // bolt; every build must then link with profiling::kBoltLinkFlag) and
  // stages it: identical, unusable, miscompile or measured with `timing`.
  absl::StatusOr<StageResult> Evaluate(
      const std::string& candidate_policy, const std::string& label,
      const TimingOptions& timing,
      const std::optional<profiling::BoltOptions>& bolt = std::nullopt);

 private:
  WorkloadStager(const workloads::Workload& workload,
                 const StageOptions& options, std::ostream& progress);
  struct Impl;
  std::shared_ptr<Impl> impl_;
  runner::BuiltVariant baseline_;
};

// The work directory a command stages in: `given` made absolute (builds
// run in copies of the tree, the input generator and perf in directories of
// their own: a relative one lost decisions and inputs), else
// $TMPDIR/<default_name>.
std::string WorkRoot(const std::string& given, const std::string& default_name);

// Prepare + Evaluate(options.candidate_policy, "candidate", options.timing,
// options.bolt).
absl::StatusOr<StageResult> StageWorkload(const workloads::Workload& workload,
                                          const StageOptions& options,
                                          std::ostream& progress);

// The replay-buffer records of a result: the candidate build's decisions and
// its staging FinalReward (kMeasured, kIdentical), or its Miscompile record
// (kMiscompile). reward_id/miscompile_id are deterministic from the build.
// None for a candidate BOLT rewrote: its figures belong to no pipeline.
struct StageRecords {
  std::vector<v1::Decision> decisions;
  std::vector<v1::FinalReward> rewards;
  std::optional<v1::Miscompile> miscompile;
  bool empty() const {
    return decisions.empty() && rewards.empty() && !miscompile;
  }
};
StageRecords RecordsOf(const StageResult& result);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_STAGING_STAGE_WORKLOAD_H_
