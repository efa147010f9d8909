#ifndef PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_H_
#define PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_H_

// Runtime search: per-module pipelines for the modules where a workload's
// time goes, every evaluation a rebuild and a staged run.
//  1. The workload is prepared once (WorkloadStager: inputs, the -O3
//     baseline) and the baseline profiled (hot_modules.h); the hot set is
//     the modules covering `coverage` of the samples, at most `max_modules`.
//  2. Evaluations go round the hot modules (one pipeline of each module's
//     seeded order of the vocabulary per round) until the vocabulary, the
//     budget (seconds) or max_evaluations runs out. Each writes a table
//     policy (module_hash -> pipeline; every other module gets the baseline)
//     and stages it with a short timing. A pipeline the wrapper did not run
//     for the module (refused: fail-open policy_refused, or any other
//     fail-open) is dropped; a miscompile is recorded and its pair never
//     proposed again, nor is a pair the buffer already blocks.
//  3. Each module's winner is its measured pipeline with the best median
//     speedup above 1; the winners are combined into one table and
//     confirmed with the full timing (the short runs of a search
//     over-estimate its best: the winner's curse), and the confirmed
//     speedup is the result.
// Every build (baseline, -O0 reference, evaluations, confirmation) shares
// the wrapper's object cache under the work dir unless `object_cache` is
// off: an evaluation recompiles only the module whose pipeline it changes.
// Every evaluation is an Episode (objective "runtime", behaviour_policy
// "runtime_search:vocabulary", the module searched, the pipeline in
// Episode.pipeline) with its staging FinalReward (episode_id set) and the
// build's decisions, or its Miscompile; the confirmation is one episode per
// combined module (behaviour_policy "runtime_search:confirm"). Records are
// written through ReplayStore::Write after each evaluation, so a search cut
// short keeps what it measured.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/runtime_search/hot_modules.h"
#include "staging_harness/staging/stage_workload.h"

namespace phaseloop::runtime_search {

inline constexpr const char* kSearchBehaviour =
    replay_buffer::kBehaviourRuntimeSearch;
inline constexpr char kConfirmBehaviour[] = "runtime_search:confirm";

struct RuntimeSearchOptions {
  // The search's wall time: profile, builds, checks and short timings;
  // the confirmation comes after it, with its own timing budget. One
  // evaluation always runs, even when the baseline and the profile took
  // the whole budget.
  double budget_s = 300;
  int max_evaluations = 0;  // 0: no limit but the budget and vocabulary
  uint64_t seed = 1;
  double coverage = 0.9;
  int max_modules = 3;
  staging::TimingOptions search_timing;   // short: see DefaultSearchTiming
  staging::TimingOptions confirm_timing;  // full
  ProfileOptions profile;                 // work_dir set by the search
  bool keep_builds = false;  // keep each evaluation's scratch build and runs
  // Builds share the wrapper's object cache: `stage.object_cache_dir`, or
  // <work_dir>/object-cache when that is empty.
  bool object_cache = true;
};

// Few pairs: enough to drop the clearly slower, not to rank the close.
staging::TimingOptions DefaultSearchTiming();

struct Evaluation {
  int index = 0;  // 1-based, in the order run
  std::string module_hash;
  std::string source;
  std::string pipeline;
  // "measured", "identical", "miscompile", "refused" (the wrapper did not
  // run the pipeline for the module; `detail` says why), "confirmed" (the
  // confirmation run, measured).
  std::string verdict;
  std::string detail;
  double speedup = 1, low = 1, high = 1;  // wall; 1 unless measured
  int pairs = 0;
  double seconds = 0;
  // The candidate's build: wall seconds, and its units' objects taken from
  // the object cache or compiled (runner::BuiltVariant).
  double build_s = 0;
  int objects_reused = 0;
  int objects_compiled = 0;
  std::string build_id;
  std::vector<std::string> episode_ids;
};

struct RuntimeSearchResult {
  std::string workload;
  Profile profile;
  std::vector<HotModule> hot;
  std::vector<std::string> refused_vocabulary;  // by pipeline_check
  std::string object_cache_dir;                 // "" when off
  double baseline_build_s = 0;
  std::vector<Evaluation> evaluations;
  int blocked_skipped = 0;  // pairs the buffer (or this search) blocked
  std::string stop_reason;  // "vocabulary", "budget", "max_evaluations"
  // The per-module winners (module_hash, pipeline), hottest first.
  std::vector<std::pair<std::string, std::string>> winners;
  std::optional<Evaluation> confirmation;
  // The winning table policy's text: set only when the confirmation's
  // interval lies above 1 (correct outputs, a gain the full run shows).
  std::string policy_table;
  bool miscompile_found = false;
  double search_s = 0;
  double elapsed_s = 0;
};

// The table policy text for `rows` (module_hash, pipeline).
std::string TablePolicyText(
    const std::vector<std::pair<std::string, std::string>>& rows);

// Runs the search on a workload prepared with `stage` (its work_dir is the
// search's scratch). `store` may be null (nothing recorded, only this
// search's miscompiles blocked). Unusable workloads are FailedPrecondition
// naming the workload file and why.
absl::StatusOr<RuntimeSearchResult> RunRuntimeSearch(
    const workloads::Workload& workload, const staging::StageOptions& stage,
    const RuntimeSearchOptions& options, replay_buffer::ReplayStore* store,
    std::ostream& progress);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_H_
