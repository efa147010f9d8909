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
//  3. The runoff: each module's best few measured pipelines above 1 (its
//     contenders) are staged again with more pairs, hottest module first,
//     while the runoff's budget lasts. The short screen's best is mostly
//     its luckiest (the winner's curse); the runoff ranks the contenders on
//     a longer timing.
//  4. Each module's winner is its contender with the best runoff median
//     above 1 (a module the runoff did not reach: its best search median
//     above 1); the winners are combined into one table and confirmed with
//     the full timing, and the confirmed speedup is the result.
//  5. With `bolt`: the pick (the confirmed table, else the build flags
//     alone or the -O3 build) rewritten by BOLT after its build
//     (profiling/bolt_optimization.h), timed in full against the same
//     baseline: a build-level decision per program, chosen only when its
//     interval lies above 1 and its median above the pick's. No records:
//     BOLT's gain belongs to no pipeline.
// Every build (baseline, -O0 reference, evaluations, confirmation) shares
// the wrapper's object cache under the work dir unless `object_cache` is
// off: an evaluation recompiles only the module whose pipeline it changes.
// Every evaluation is an Episode (objective "runtime", behaviour_policy
// "runtime_search:vocabulary", the module searched, the pipeline in
// Episode.pipeline) with its staging FinalReward (episode_id set) and the
// build's decisions, or its Miscompile; so is every runoff timing
// (behaviour_policy "runtime_search:runoff"); the confirmation is one
// episode per combined module (behaviour_policy "runtime_search:confirm").
// Records are written through ReplayStore::Write after each evaluation, so a
// search cut short keeps what it measured.

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
inline constexpr const char* kRunoffBehaviour =
    replay_buffer::kBehaviourRuntimeRunoff;

// Few pairs: enough to drop the clearly slower, not to rank the close.
staging::TimingOptions DefaultSearchTiming();
// More pairs than the screen, at 95 %: enough to rank two contenders a few
// per cent apart on a quiet machine.
staging::TimingOptions DefaultRunoffTiming();

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
  staging::TimingOptions search_timing = DefaultSearchTiming();  // short
  staging::TimingOptions confirm_timing;                         // full
  // The runoff (step 3): at most this many contenders per module (0: none;
  // the screen's medians pick the winners), timed with `runoff_timing`; a
  // module's runoff starts only while `runoff_budget_s` seconds of runoff
  // remain, each contender's timing getting at most its share of what
  // remains, so a module's contenders are compared on equal timings.
  int runoff_contenders = 2;
  double runoff_budget_s = 120;
  staging::TimingOptions runoff_timing = DefaultRunoffTiming();
  ProfileOptions profile;    // work_dir set by the search
  bool keep_builds = false;  // keep each evaluation's scratch build and runs
  // Builds share the wrapper's object cache: `stage.object_cache_dir`, or
  // <work_dir>/object-cache when that is empty.
  bool object_cache = true;
  // Step 5; every build then links with profiling::kBoltLinkFlag (added to
  // stage.link_flags when missing). stage.bolt must be unset: it would
  // rewrite every evaluation and credit pipelines with the layout's gain.
  std::optional<profiling::BoltOptions> bolt;
};

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
  // Executed IR instructions, baseline / candidate, when the stage options
  // asked for the count (StageOptions::count_executed); 0 otherwise.
  double executed_ir_ratio = 0;
  // What made the machine busy while it was timed (StageResult).
  std::vector<std::string> machine_warnings;
  // Runs too short to time well (StageResult::short_runs), "" otherwise.
  std::string short_runs;
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
  // The runoff's stagings, in the order run (index continues the
  // evaluations'); modules it did not reach, with contenders, are named in
  // runoff_skipped (the budget ran out).
  std::vector<Evaluation> runoff;
  std::vector<std::string> runoff_skipped;
  double runoff_s = 0;
  // The per-module winners (module_hash, pipeline), hottest first.
  std::vector<std::pair<std::string, std::string>> winners;
  std::optional<Evaluation> confirmation;
  // The winning table policy's text: set only when the confirmation's
  // interval lies above 1 (correct outputs, a gain the full run shows).
  std::string policy_table;
  // stage.candidate_cflags: what every evaluation is built with ("" for
  // none), e.g. a profile (-fprofile-instr-use=FILE), -flto.
  std::string candidate_cflags;
  // stage.link_flags: what every build, the baseline's too, links with.
  std::vector<std::string> link_flags;
  // A profile-guided search (stage.candidate_cflags): the profile alone
  // (every module at the baseline's pipeline, built with the profile),
  // timed like a search evaluation before the pipelines are; and, when no
  // module pipeline won, whether its confirmation's interval lies above 1
  // (the gain is then the profile's, with no table to write).
  std::optional<Evaluation> profiled;
  bool profile_confirmed = false;
  // Step 5: the pick rewritten by BOLT, timed in full ("confirmed" when
  // measured; "failed" with why when BOLT could not run, e.g. no program
  // wrote a profile; "miscompile" with BOLT's cause, which is no pipeline's
  // and so not miscompile_found); chosen when its interval lies above 1 and
  // its median above BoltReference.
  std::optional<Evaluation> bolted;
  std::optional<profiling::BoltResult> bolt;  // what BOLT did, when it ran
  bool bolt_chosen = false;
  bool miscompile_found = false;
  double search_s = 0;
  double elapsed_s = 0;
};

// A module's runoff contenders: its measured evaluations with a median
// above `floor` (1: -O3; in a profile-guided search, the profile alone's
// median), best median first (ties: the earlier), at most `n`.
std::vector<const Evaluation*> Contenders(
    const std::vector<Evaluation>& evaluations, const std::string& module_hash,
    int n, double floor = 1);

// Each hot module's winner (module_hash, pipeline), hottest first: the
// best measured runoff median above `floor` where the runoff timed the
// module, else the best measured search median above it; none when nothing
// is above it.
std::vector<std::pair<std::string, std::string>> ChooseWinners(
    const std::vector<HotModule>& hot,
    const std::vector<Evaluation>& evaluations,
    const std::vector<Evaluation>& runoff, double floor = 1);

// What BOLT's row (step 5) must beat besides 1: the confirmation's median
// where it confirmed a gain (the winning table, or the build flags alone);
// the build flags' own confirmed median where it did not but every build
// has them (BOLT's row is those flags rewritten); else 1.
double BoltReference(const RuntimeSearchResult& r);

// The table policy text for `rows` (module_hash, pipeline).
std::string TablePolicyText(
    const std::vector<std::pair<std::string, std::string>>& rows);

// Runs the search on a workload prepared with `stage` (its work_dir is the
// search's scratch). With stage.candidate_cflags (an execution profile,
// -fprofile-instr-use=FILE), every evaluation and the confirmation are
// built with it and compared with the baseline built without it: the
// profile alone is staged first, and since the profile is part of each
// module, the hot modules' hashes (the table policies' keys, the episodes'
// modules and features) are that build's, found by source. `store` may be null
// (nothing recorded, only this search's miscompiles blocked). Unusable
// workloads are FailedPrecondition naming the workload file and why.
absl::StatusOr<RuntimeSearchResult> RunRuntimeSearch(
    const workloads::Workload& workload, const staging::StageOptions& stage,
    const RuntimeSearchOptions& options, replay_buffer::ReplayStore* store,
    std::ostream& progress);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_H_
