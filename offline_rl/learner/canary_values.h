#ifndef PHASELOOP_OFFLINE_RL_LEARNER_CANARY_VALUES_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_CANARY_VALUES_H_

// Canary runs as values of a speed policy's candidate table (candidate
// formulation, objective runtime; private to the dataset library).
//
// A canary run's final reward (`phaseloop canary run`: source "canary", the
// candidate build's build_id, value = log(p95_baseline / p95_canary) over
// the judged steps plus the pass bonus, or minus the fail penalty when it
// rolled back) judges a whole build. A promoted run counts the speed it
// measured (relative_value, without the bonus: shaping credited through
// anchors would make every promoted choice look better than the last), a
// rolled-back one its final reward, penalty included. It is joined to that
// build's compile decisions by build_id alone — never to another build's — and
// each decision the candidate policy made (outcome OPTIMIZED, at -O2/-O3, with
// its 56 Autophase and 70 InstCount features, pipeline exactly one of the
// candidates', not blocked for its module) becomes a cell (module,
// candidate) worth weight * reward. The state is the decision's own
// features: the same unoptimised-module features a runtime-search
// episode's step carries (the search copies them from its baseline build's
// decision), so a module_hash has one state whichever record it came from.
//
// Credit: the run's value compares the candidate build with its baseline,
// the stable policy's build (FinalReward.baseline_policy_version; "" is
// plain clang, whose every choice is -O3). The stable policy's choice for a
// module is read from any build of that version in the buffer (a policy
// decides by the module alone). Per module the candidate policy decided:
//  - the same choice as stable: the same code on both sides, the run says
//    nothing about it (`unchanged`; an A/A run teaches nothing);
//  - stable at -O3, the candidate on another: that candidate's cell gets
//    the whole build's reward (the canary cannot tell which module made the
//    difference);
//  - the candidate back at -O3, stable on another: stable's choice's cell
//    gets minus the reward;
//  - both off -O3: the candidate's cell gets the reward plus what earlier
//    runs (in time order) said stable's choice is worth on that module;
//    with no earlier run of it, or stable's choice unknown, a difference
//    between two unknown values, left out (`unanchored`).
// Runs recorded without baseline_policy_version count as against -O3: every
// module the candidate moved off -O3 gets the reward, and one it left there
// the -O3 cell, worth 0 by definition whatever the reward. Several runs
// judging the same cell: the mean. Rewards without a build_id (the reward
// engine's per-window log(SLO/p95), which compares with no other build)
// are not read.
//
// Rows follow their module's split: a module the buffer records (modules
// table) in another split stays out, and a module it does not know (the
// service's own code) is training data.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "offline_rl/learner/dataset.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl::internal {

// One (module, candidate) cell judged by canary runs.
struct CanaryCell {
  std::string module_hash;
  int candidate = 0;  // index into the candidates
  double value = 0;   // mean over the runs of weight * reward; -O3: 0
  int runs = 0;
  // The module's unoptimised features, from the first decision read.
  std::vector<int64_t> autophase;
  std::vector<int64_t> inst_count;
};

struct CanaryCells {
  std::vector<CanaryCell> cells;  // ordered by module_hash, then candidate
  int64_t runs = 0;               // run rewards with at least one cell
  int64_t decisions = 0;          // decisions that made a cell
  // Decisions of judged builds that made none: not the policy's choice
  // (plain clang, the user's pipeline), no features, not a candidate.
  int64_t skipped = 0;
  int64_t blocked = 0;  // the (module, pipeline) pair is blocked
  // Decisions equal to the stable policy's, and decisions where both
  // policies chose off -O3 (or stable's choice is unknown): no cell.
  int64_t unchanged = 0;
  int64_t unanchored = 0;
  // What the cells were made of, without ids or times that change when the
  // same build is measured again (for the data snapshot's digest).
  std::string digest_input;
};

// The candidate policy `version` chose for `module_hash` at one of
// `opt_levels`, read from any of its builds' decisions in `store` (a policy
// decides by the module alone): an index into the candidates by pipeline
// (`by_pipeline`), -1 when the buffer holds no such decision or its
// pipeline is no candidate. Version "" is plain clang: `baseline`.
absl::StatusOr<int> PolicyChoiceOf(
    replay_buffer::ReplayStore& store, const std::string& version,
    const std::string& module_hash, const std::vector<std::string>& opt_levels,
    const std::map<std::string, int>& by_pipeline, int baseline);

// PolicyChoiceOf at -O2/-O3 for each of `module_hashes`, the candidates
// matched by pipeline: module_hash -> candidate index or -1.
absl::StatusOr<std::map<std::string, int>> PolicyChoicesOn(
    replay_buffer::ReplayStore& store, const std::string& version,
    const std::vector<std::string>& module_hashes,
    const std::vector<Candidate>& candidates, int baseline);

// The cells of `split` (`train_split`: also modules the buffer does not
// know) from every canary run reward in `store`, each worth `weight` times
// its reward. `baseline` is the index of the candidate whose pipeline is
// -O3's (-1: none); `blocked(module_hash, pipeline)` says whether a pair is
// blocked.
absl::StatusOr<CanaryCells> ReadCanaryCells(
    replay_buffer::ReplayStore& store, double weight,
    const std::vector<Candidate>& candidates, int baseline,
    const std::function<bool(const std::string&, const std::string&)>& blocked,
    const std::string& split, const std::string& train_split);

}  // namespace phaseloop::offline_rl::internal

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_CANARY_VALUES_H_
