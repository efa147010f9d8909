#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_POOL_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/search/best_sequences.h"
#include "staging_harness/search/episode_sink.h"
#include "staging_harness/search/module_search.h"
#include "staging_harness/search/search_inputs.h"
#include "staging_harness/search/strategies.h"
#include "staging_harness/workers/worker_client.h"

namespace phaseloop::search {

struct SearchRunOptions {
  service::WorkerOptions worker;  // how to spawn (or reach) session workers
  int workers = 0;                // 0: one per hardware thread
  StrategyOptions strategy;
  Objective objective = Objective::kAllocSize;
  double budget_seconds = 10;   // per module, search only (not baselines)
  int64_t max_evaluations = 0;  // per module; 0 = only the clock limits
  uint64_t seed = 1;
  std::string run_id;  // prefix of episode ids; "" = random
  // Pairs never reported as a module's best (ModuleSearchOptions::blocked);
  // called from every worker thread. nullptr: nothing is blocked.
  PipelineBlocked blocked;
  // Set (by a stop signal): each module's search ends at its next step
  // (ModuleResult::stopped). nullptr: never.
  const std::atomic<bool>* stop = nullptr;
};

// What the search found on one module. `status` not OK: the module could not
// be searched (bad module, worker lost) and the figures are empty.
struct ModuleResult {
  ModuleInput input;
  absl::Status status;
  std::string module_hash;
  std::string action_space_version;
  ModuleReference reference;  // start (no passes) and -Oz figures
  std::vector<int64_t> start_autophase;
  std::vector<int> best_actions;  // the best sequence found (may be empty)
  std::string best_episode_id;    // the episode it is a prefix of
  int64_t ir_count = 0;           // after best_actions, measured by replay
  int64_t text_size = 0;          // after best_actions, measured by replay
  int64_t alloc_size = 0;         // likewise: the whole object's bytes
  int64_t episodes = 0;
  int64_t evaluations = 0;      // actions applied (steps, incl. failed)
  int64_t failed_steps = 0;     // crashed, hung or broke the verifier
  int64_t timed_out_steps = 0;  // of those, hung: over the step timeout
  int64_t blocked_skipped = 0;  // better sequences refused: blocked pipeline
  double seconds = 0;           // search time
  // The clock ended the search before max_evaluations did (or there was no
  // max_evaluations): its result depends on the machine's speed.
  bool time_limited = false;
  bool stopped = false;  // `stop` ended it before its budget
};

// The result's value of `objective` (after best_actions).
int64_t ResultValue(const ModuleResult& result, Objective objective);

// Workers a run uses: `requested` (0: hardware threads), at most one per
// module, at least one.
int WorkerCount(int requested, size_t modules);

using SearchProgress =
    std::function<void(const ModuleResult& result, int done, int total)>;

// Searches every module with `options.strategy`, in parallel over a pool of
// session workers (one thread per worker; modules handed out in order). A
// module's failure is its result's status; a crashing or hanging pass is a
// failed step and costs one worker restart. Every episode goes to `sink`
// (calls serialised; flushed after each module). -Oz baselines run in this
// process, one at a time. `progress` (optional) is called once per module,
// serialised. Errors: a worker could not be started.
absl::StatusOr<std::vector<ModuleResult>> RunSearch(
    const std::vector<ModuleInput>& modules, const SearchRunOptions& options,
    const std::vector<KnownBest>& known, EpisodeSink& sink,
    const SearchProgress& progress = nullptr);

// The best sequences of the searched modules, for MergeBestSequences.
std::vector<KnownBest> BestSequencesOf(const std::vector<ModuleResult>& results,
                                       Objective objective);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_POOL_H_
