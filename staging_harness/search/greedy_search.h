#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_GREEDY_SEARCH_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_GREEDY_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/session/compilation_session.h"

namespace phaseloop::search {

// What a search minimises (ARCHITECTURE.md, "Objectives and metrics";
// replay_buffer/objective_values.h): IR instructions, .text bytes, or the
// whole object's allocated bytes (the size objective, issue 20).
enum class Objective { kIrCount, kTextSize, kAllocSize };

const char* ObjectiveName(Objective objective);

// Of a state's three figures, the one `objective` minimises.
int64_t PickByObjective(Objective objective, int64_t ir_count,
                        int64_t text_size, int64_t alloc_size);
std::optional<Objective> ParseObjective(const std::string& text);

struct SearchResult {
  std::vector<int> actions;  // the best sequence found
  int64_t ir_count = 0;      // of the final state
  int64_t text_size = 0;     // of the final state
  int64_t alloc_size = 0;    // of the final state: the whole object's bytes
  int64_t evaluations = 0;   // actions tried
  double seconds = 0;
};

// CompilerGym's greedy search: from the current state, try every action on a
// fork, keep the one that lowers the objective most, repeat until no action
// lowers it or the budget runs out: `budget_seconds` of the clock, or
// `max_evaluations` actions tried (0: no limit) — the work budget, which stops
// every machine at the same point. Actions that fail (verifier) are skipped.
// `start` is not modified.
absl::StatusOr<SearchResult> GreedySearch(session::CompilationSession& start,
                                          Objective objective,
                                          double budget_seconds,
                                          int64_t max_evaluations = 0);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_GREEDY_SEARCH_H_
