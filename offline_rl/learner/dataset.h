#ifndef PHASELOOP_OFFLINE_RL_LEARNER_DATASET_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_DATASET_H_

// The learner's training data, read from the replay buffer for one objective
// and split, in flat arrays (no libtorch here):
// - Step-wise formulation: one transition (s, a, r, s', done) per step of
//   every search episode (behaviour policies other than "candidate:*"), cut
//   at max_steps; s = BuildState(step features, actions taken before it),
//   s' = the next step's state (done at the episode's last step, whose
//   successor state was never observed, and at the cut). A failed step keeps
//   the module unchanged (the session rolled it back): it is not added to the
//   history. Demonstrations for behaviour cloning: the steps of the module's
//   best-known sequence (ReplayStore::ReadBestSequences, its episode).
// - Candidate formulation: one single-step transition (s0, candidate, r,
//   done) per module and measured candidate (episodes whose behaviour_policy
//   is "candidate:<name>", `phaseloop candidates mine`); demonstrations: the
//   best measured candidate per module. `table` keeps every module's
//   measured values for scoring a policy's choices.
//   Objective "runtime" (a speed policy): the candidates are pipelines a
//   runtime search evaluates one module at a time (episodes with
//   behaviour_policy replay_buffer::kBehaviourRuntimeSearch, matched by
//   Episode.pipeline, features in their one step); a candidate's value is
//   the weighted staging reward of its evaluation (an evaluation without
//   one is skipped), and the candidate whose pipeline is
//   kRuntimeBaselinePipeline is worth 0 on every module where no episode
//   measured it (the reward is log(t_baseline / t_candidate) against that
//   baseline); a profile-guided search measures it, as the profile alone,
//   on its profiled modules, whose every reward includes the profile's gain.
//   With a "canary" weight in final_reward_weights, canary run rewards are
//   values too: joined by build_id to the decisions the candidate policy
//   made in that build (canary_values.h: states from the decisions' own
//   features, every module it changed credited with the build's reward,
//   -O3 choices worth 0, rows in their module's split); a (module,
//   candidate) both sources measured gets the mean of the two.
//   Objective "alloc_size": the user's own topk builds are rows too
//   (topk_outcomes.h): each compile decision that measured candidates, by
//   its own features, for modules the lab did not measure.
// Rewards: step_weight * stored step reward, plus, at an episode's last step,
// weight * (mean final reward of that source) for each source in
// final_reward_weights ("staging", "canary") that judges the episode.
// Blocked pairs (the buffer's block list: a miscompile blamed the module's
// pipeline) are never a target: a step-wise episode is cut before the step
// whose action sequence so far is blocked for its module (the step before
// it is then its last, done and without final rewards), a blocked best
// sequence is no demonstration, and a candidate blocked for a module has no
// measurement there.
//
// Building reads the store in one pass per split; the result is immutable
// and may be shared between threads.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/objectives/objective_names.h"
#include "offline_rl/learner/learner_config.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl {

using objectives::kObjectiveRuntime;
// The speed baseline the runtime search's staging rewards are relative to.
inline constexpr char kRuntimeBaselinePipeline[] = "default<O3>";

// Transitions in structure-of-arrays form. States are raw BuildState vectors
// (row-major [size][state_dim]); the network normalises them.
struct TransitionSet {
  int state_dim = 0;
  int num_actions = 0;
  std::vector<float> states;       // [size][state_dim]
  std::vector<float> next_states;  // [size][state_dim]; zeros when done
  std::vector<int32_t> actions;    // [size], in [0, num_actions)
  std::vector<float> rewards;      // [size]
  std::vector<uint8_t> done;       // [size]
  // The start state of every episode (module, for candidates):
  // [initial_count][state_dim], for off-policy evaluation.
  std::vector<float> initial_states;

  int64_t size() const { return static_cast<int64_t>(actions.size()); }
  int64_t initial_count() const {
    return state_dim == 0
               ? 0
               : static_cast<int64_t>(initial_states.size()) / state_dim;
  }
};

// One candidate pipeline of the candidate formulation.
struct Candidate {
  std::string name;
  std::vector<int32_t> actions;  // indices into the action space
  std::string pipeline;          // PassBuilder text
};

// The version `phaseloop candidates mine` gives its episodes
// (action_space_version): "candidates/" and 16 hex digits of the content
// hash of the candidates' pipelines, in order (the miner calls this one). A
// mined episode of another candidate set may name another pipeline by the
// same candidate name, so the learner reads only this set's.
std::string CandidateSetVersion(const std::vector<Candidate>& candidates);

// Every module's measured candidate values (candidate formulation).
struct CandidateTable {
  std::vector<std::string> module_hashes;
  std::vector<float> start_states;  // [modules][state_dim]
  std::vector<float> values;        // [modules][candidates]; NaN: unmeasured
  // [modules][candidates]: the measured object size (allocated bytes for
  // an alloc_size objective, else .text bytes); NaN when unmeasured or the
  // episode did not record it.
  std::vector<double> object_sizes;
};

// The candidate formulation's training sets for the table's `rows`
// (module indices): one done transition per measured candidate, and the best
// measured candidate as the demonstration. Used for whole splits and for the
// folds of cross-fitting.
void FillCandidateSets(const CandidateTable& table,
                       const std::vector<int>& rows, int num_candidates,
                       int state_dim, TransitionSet* transitions,
                       TransitionSet* demonstrations);

struct SplitData {
  TransitionSet transitions;     // for CQL and FQE
  TransitionSet demonstrations;  // (state, action) for BC; rewards 0, done 1
  CandidateTable table;          // candidate formulation only
  int64_t episodes = 0;
  int64_t skipped_episodes = 0;  // wrong action space, no features, ...
  // Episodes cut, demonstrations and candidate measurements left out because
  // their (module, pipeline) pair is blocked.
  int64_t blocked = 0;
  // Runtime candidate formulation: canary run rewards that judged a cell of
  // this split, the decisions they were joined to, and decisions of judged
  // builds left out (not the policy's choice, no features, not a
  // candidate).
  int64_t canary_runs = 0;
  int64_t canary_decisions = 0;
  int64_t skipped_decisions = 0;
  // Decisions of judged builds that made no cell because stable's build
  // made the same choice, or both chose off -O3 (canary_values.h).
  int64_t canary_unchanged = 0;
  int64_t canary_unanchored = 0;
  // Size candidate formulation (objective alloc_size): rows from the user's
  // own topk builds (topk_outcomes.h) — modules, the decisions read for
  // them, and topk decisions left out.
  int64_t topk_rows = 0;
  int64_t topk_decisions = 0;
  int64_t topk_skipped = 0;
  // module_hash -> canary runs that judged each candidate there (modules a
  // canary judged: the service's code; canary_exploration.h reads them).
  std::map<std::string, std::vector<int>> canary_judged;
  // With DatasetOptions::stable_version: that policy's candidate on each of
  // those modules (-1: the buffer holds no decision of it there).
  bool stable_choice_read = false;
  std::map<std::string, int> stable_choice;
  std::string digest;  // content hash of the episodes and rewards read
};

struct Dataset {
  std::string formulation;
  std::vector<std::string> action_names;  // the network's output names
  std::string action_space_version;
  std::vector<Candidate> candidates;  // candidate formulation
  SplitData train;
  SplitData validation;
  // "buffer=<digest> train: E episodes, T transitions; validation: ...".
  std::string snapshot;
};

struct DatasetOptions {
  // The pass action space (names by index) and its version; episodes of
  // another version are skipped.
  std::vector<std::string> pass_names;
  // Each action's pipeline text (passes::Action::pipeline), by index: the
  // block list is matched on the actions' pipelines joined by ",". Required
  // for the step-wise formulation when the buffer blocks any pair.
  std::vector<std::string> pass_pipelines;
  std::string action_space_version;
  std::vector<Candidate> candidates;  // candidate formulation
  // Runtime candidate formulation: the stable policy's version ("" = plain
  // clang) when known; its choice on each module canaries judged is read
  // (SplitData::stable_choice, for canary_exploration.h).
  std::optional<std::string> stable_version;
};

// Reads both splits of `config` from `store`. FailedPrecondition when the
// training split yields no transitions (message names the filter).
absl::StatusOr<Dataset> BuildDataset(replay_buffer::ReplayStore& store,
                                     const LearnerConfig& config,
                                     const DatasetOptions& options);

// Reads a candidates file: JSON {"candidates": [{"name", "actions": [pass
// names or indices], "pipeline"}]} (or the bare array). Names must be
// unique; actions must exist in `pass_names`; pipeline non-empty. When
// `objective` is given and the file names the objective it was mined for
// ("objective", as `phaseloop candidates mine` writes), they must agree:
// the candidates' episodes are read by objective, so a file mined for
// another one would pair stale episodes by name.
absl::StatusOr<std::vector<Candidate>> ReadCandidatesFile(
    const std::string& path, const std::vector<std::string>& pass_names,
    const std::string& objective = "");

// Feature normalisation over a set's states: mean and scale = 1 / stddev
// (1 where the stddev is below 1e-6, so constant features pass unscaled).
struct Normalization {
  std::vector<float> mean;
  std::vector<float> scale;
};
Normalization ComputeNormalization(const TransitionSet& set);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_DATASET_H_
