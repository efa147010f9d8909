#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_STRATEGIES_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_STRATEGIES_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/search/best_sequences.h"
#include "staging_harness/search/module_search.h"

namespace phaseloop::search {

// Pass-order search strategies over isolated session workers. Each runs until
// the module's budget is spent (greedy and beam may stop earlier, at a local
// optimum), logs every trajectory as an episode and offers every state it
// keeps to the module's best. A crash, hang or verifier failure of an action
// is a failed step of the episode (state unchanged) and the search goes on.
enum class Strategy { kRandom, kGreedy, kBeam, kGuided };

const char* StrategyName(Strategy strategy);
std::optional<Strategy> ParseStrategy(const std::string& text);

struct StrategyOptions {
  Strategy strategy = Strategy::kRandom;
  int episode_length = 40;  // random episodes (random, guided refinement)
  int beam_width = 4;       // beam
  int neighbours = 3;       // guided: similar modules whose sequences to replay
};

// random: episodes of `episode_length` actions drawn uniformly from the whole
// action space (propensity 1/|A| each), from the end of `from` (nullptr: the
// start state), until the budget runs out. Per-episode seeds come from
// ModuleSearch::EpisodeSeed.
absl::Status RandomSearch(ModuleSearch& search, const Trajectory* from,
                          int episode_length, const std::string& behaviour);

// beam (width W; greedy is W = 1, CompilerGym's greedy search): the frontier
// starts as {start}; every frontier state is expanded by every action (a fork
// and one step each); the children that lower the objective below their
// parent's, not equal to a state already kept (by module hash, W > 1), are
// ranked by objective value (ties: expansion order) and the W best become the
// frontier. It stops when no child is kept or the budget runs out (the best
// children evaluated so far are then kept as the last level). Episodes are
// the root-to-leaf paths of the kept tree, failed expansions included at the
// state they were tried in; propensity 1 (the choice is deterministic).
// Returns the best leaf.
absl::StatusOr<Trajectory> BeamSearch(ModuleSearch& search, Trajectory start,
                                      int width, const std::string& behaviour);

// guided: replays, one action at a time (so every prefix is evaluated), the
// best sequences of the `neighbours` (nearest first), then refines from the
// best state reached (the start state if none improved on it): greedy until
// a local optimum, then random episodes from there for the rest of the
// budget. Replayed and greedy steps have propensity 1, random ones 1/|A|.
absl::Status GuidedSearch(ModuleSearch& search,
                          const std::vector<const KnownBest*>& neighbours,
                          int episode_length);

// Runs `options.strategy`; guided takes its neighbours from `known`.
absl::Status RunStrategy(ModuleSearch& search, const StrategyOptions& options,
                         const std::vector<KnownBest>& known);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_STRATEGIES_H_
