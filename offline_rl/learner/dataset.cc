#include "offline_rl/learner/dataset.h"

// The step-wise formulation's reader and BuildDataset; the candidate
// formulation's table is candidate_split.cc, what both read with is
// dataset_reading.h.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "offline_rl/learner/dataset_reading.h"

namespace phaseloop::offline_rl {
namespace {

using internal::AddTransition;
using internal::AppendState;
using internal::BlockList;
using internal::EpisodeDigest;
using internal::FinalRewards;
using internal::ForEachEpisode;
using internal::HasFeatures;
using internal::InitSet;
using internal::IsBlocked;
using internal::kCandidatePrefix;
using internal::ListIds;
using internal::StepReward;
using policy_runtime::BuildState;
using policy_runtime::StateDim;

// The pipeline text of `actions` (indices into options.pass_pipelines).
std::string PipelineOf(const DatasetOptions& options,
                       const std::vector<int32_t>& actions) {
  std::string text;
  for (int32_t a : actions) {
    if (!text.empty()) text += ',';
    text += options.pass_pipelines[a];
  }
  return text;
}

// Whether the whole sequence `actions` is blocked for `module_hash` (an
// index out of the action space never is).
bool SequenceBlocked(const BlockList& blocked, const DatasetOptions& options,
                     const std::string& module_hash,
                     const std::vector<int32_t>& actions) {
  if (blocked.find(module_hash) == blocked.end()) return false;
  for (int32_t a : actions) {
    if (a < 0 || a >= static_cast<int32_t>(options.pass_pipelines.size())) {
      return false;
    }
  }
  return IsBlocked(blocked, module_hash, PipelineOf(options, actions));
}

// How many of `e`'s first `steps` steps to keep: up to the step whose
// action sequence so far (failed steps dropped) is blocked for its module.
int UnblockedSteps(const v1::Episode& e, int steps,
                   const DatasetOptions& options, const BlockList& blocked) {
  if (blocked.find(e.module_hash()) == blocked.end()) return steps;
  std::vector<int32_t> taken;
  for (int i = 0; i < steps; ++i) {
    if (e.steps(i).failed()) continue;
    taken.push_back(e.steps(i).action());
    if (IsBlocked(blocked, e.module_hash(), PipelineOf(options, taken))) {
      return i;
    }
  }
  return steps;
}

absl::Status ReadStepwiseSplit(replay_buffer::ReplayStore& store,
                               const LearnerConfig& config,
                               const DatasetOptions& options,
                               const BlockList& blocked,
                               const std::string& split, SplitData* out) {
  const int n = static_cast<int>(options.pass_names.size());
  InitSet(n, &out->transitions);
  InitSet(n, &out->demonstrations);
  std::string digest_input;
  auto bonus = FinalRewards(store, config, split, &digest_input);
  if (!bonus.ok()) return bonus.status();
  auto ids = ListIds(store, split, config.objective);
  if (!ids.ok()) return ids.status();
  std::map<std::string, bool> modules;  // module_hash -> seen
  TransitionSet& t = out->transitions;
  absl::Status status = ForEachEpisode(store, *ids, [&](const v1::Episode& e) {
    if (absl::StartsWith(e.behaviour_policy(), kCandidatePrefix)) return;
    bool usable = e.action_space_version() == options.action_space_version &&
                  e.steps_size() > 0;
    for (const v1::Step& s : e.steps()) {
      usable = usable && HasFeatures(s) && s.action() >= 0 && s.action() < n;
    }
    if (!usable) {
      ++out->skipped_episodes;
      return;
    }
    const int uncut = std::min(e.steps_size(), config.max_steps);
    const int steps = UnblockedSteps(e, uncut, options, blocked);
    if (steps < uncut) ++out->blocked;
    if (steps == 0) return;
    ++out->episodes;
    modules[e.module_hash()] = true;
    absl::StrAppend(&digest_input, EpisodeDigest(e));
    // Final rewards judge the whole episode, not a prefix cut by a block
    // or by max_steps.
    const auto found = bonus->find(e.episode_id());
    const double final_bonus =
        found == bonus->end() || steps < e.steps_size() ? 0 : found->second;
    std::vector<int32_t> history;
    for (int i = 0; i < steps; ++i) {
      const v1::Step& s = e.steps(i);
      const bool last = i + 1 == steps;
      AppendState(s, history, n, &t.states);
      if (i == 0) AppendState(s, history, n, &t.initial_states);
      if (!s.failed()) history.push_back(s.action());
      if (last) {
        t.next_states.resize(t.next_states.size() + t.state_dim, 0.0f);
      } else {
        AppendState(e.steps(i + 1), history, n, &t.next_states);
      }
      AddTransition(&t, s.action(), StepReward(config, s, last, final_bonus),
                    last);
    }
  });
  if (!status.ok()) return status;

  // Demonstrations: each module's best-known sequence, replayed from the
  // episode that found it.
  TransitionSet& d = out->demonstrations;
  for (const auto& [module_hash, unused] : modules) {
    auto best = store.ReadBestSequences(module_hash);
    if (!best.ok()) return best.status();
    for (const v1::BestSequence& b : *best) {
      if (b.objective() != config.objective ||
          b.action_space_version() != options.action_space_version ||
          b.episode_id().empty() || b.actions_size() == 0) {
        continue;
      }
      if (SequenceBlocked(blocked, options, module_hash,
                          {b.actions().begin(), b.actions().end()})) {
        ++out->blocked;
        continue;
      }
      auto episode = store.ReadEpisodes({b.episode_id()});
      if (!episode.ok()) continue;  // the best episode was not kept
      std::vector<int32_t> history;
      int taken = 0;
      for (const v1::Step& s : (*episode)[0].steps()) {
        if (taken >= b.actions_size() || taken >= config.max_steps) break;
        if (s.failed()) continue;  // best sequences drop failed steps
        if (!HasFeatures(s) || s.action() != b.actions(taken) ||
            s.action() < 0 || s.action() >= n) {
          break;
        }
        AppendState(s, history, n, &d.states);
        d.next_states.resize(d.next_states.size() + d.state_dim, 0.0f);
        AddTransition(&d, s.action(), 0.0f, true);
        history.push_back(s.action());
        ++taken;
      }
    }
  }
  out->digest = ir::ContentHash(digest_input);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Dataset> BuildDataset(replay_buffer::ReplayStore& store,
                                     const LearnerConfig& config,
                                     const DatasetOptions& options) {
  if (options.pass_names.empty()) {
    return absl::InvalidArgumentError("the pass action space is empty");
  }
  Dataset data;
  data.formulation = config.formulation;
  data.action_space_version = options.action_space_version;
  const bool candidate = config.formulation == "candidate";
  if (candidate) {
    if (options.candidates.empty()) {
      return absl::InvalidArgumentError(
          "the candidate formulation needs candidates: set candidates_file in "
          "the config or pass --candidates (written by `phaseloop candidates "
          "mine`)");
    }
    data.candidates = options.candidates;
    for (const Candidate& c : options.candidates) {
      data.action_names.push_back(c.name);
    }
  } else {
    data.action_names = options.pass_names;
  }
  auto listed = store.BlockedPipelines("");
  if (!listed.ok()) return listed.status();
  BlockList blocked;
  std::string block_digest;
  for (const replay_buffer::BlockedPipeline& b : *listed) {
    blocked[b.module_hash].insert(b.pipeline);
    absl::StrAppend(&block_digest, b.module_hash, "|", b.pipeline, "\n");
  }
  if (!candidate && !blocked.empty() &&
      options.pass_pipelines.size() != options.pass_names.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the replay buffer blocks ", listed->size(),
        " (module, pipeline) pairs, but the dataset options give ",
        options.pass_pipelines.size(), " action pipelines for ",
        options.pass_names.size(),
        " actions; set DatasetOptions.pass_pipelines from the action space"));
  }
  auto read = candidate ? internal::ReadCandidateSplit : ReadStepwiseSplit;
  absl::Status status =
      read(store, config, options, blocked, config.train_split, &data.train);
  if (!status.ok()) return status;
  if (!config.validation_split.empty()) {
    status = read(store, config, options, blocked, config.validation_split,
                  &data.validation);
    if (!status.ok()) return status;
  }
  // A new block changes what the learner reads: the data snapshot too.
  if (!block_digest.empty()) {
    for (SplitData* split : {&data.train, &data.validation}) {
      split->digest = ir::ContentHash(split->digest + block_digest);
    }
  }
  const TransitionSet& used = config.algorithm == "bc"
                                  ? data.train.demonstrations
                                  : data.train.transitions;
  if (used.size() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the replay buffer has no ",
        config.algorithm == "bc" ? "demonstrations" : "transitions",
        " for split \"", config.train_split, "\", objective \"",
        config.objective, "\", formulation \"", config.formulation, "\"",
        candidate ? " (episodes with behaviour_policy candidate:<name> for "
                    "the candidates file's names: run `phaseloop candidates "
                    "mine`)"
                  : " (search episodes in action space " +
                        options.action_space_version +
                        ": run `phaseloop search` into the buffer)"));
  }
  data.snapshot = absl::StrCat(
      "buffer=", ir::ContentHash(data.train.digest + data.validation.digest),
      " train: ", data.train.episodes, " episodes, ",
      data.train.transitions.size(), " transitions, ",
      data.train.demonstrations.size(),
      " demonstrations; validation: ", data.validation.episodes, " episodes, ",
      data.validation.transitions.size(), " transitions");
  if (data.train.canary_runs + data.validation.canary_runs > 0) {
    absl::StrAppend(
        &data.snapshot,
        "; canary: ", data.train.canary_runs + data.validation.canary_runs,
        " run rewards over ",
        data.train.canary_decisions + data.validation.canary_decisions,
        " decisions");
  }
  const int64_t unchanged =
      data.train.canary_unchanged + data.validation.canary_unchanged;
  const int64_t unanchored =
      data.train.canary_unanchored + data.validation.canary_unanchored;
  if (unchanged + unanchored > 0) {
    absl::StrAppend(&data.snapshot,
                    "; canary decisions without a value: ", unchanged,
                    " the same as stable's, ", unanchored,
                    " against a stable choice unknown or never valued");
  }
  if (data.train.topk_rows + data.validation.topk_rows > 0) {
    absl::StrAppend(&data.snapshot, "; your builds: ",
                    data.train.topk_rows + data.validation.topk_rows,
                    " modules from ",
                    data.train.topk_decisions + data.validation.topk_decisions,
                    " topk decisions");
  }
  if (data.train.topk_skipped + data.validation.topk_skipped > 0) {
    absl::StrAppend(&data.snapshot, "; topk decisions left out: ",
                    data.train.topk_skipped + data.validation.topk_skipped,
                    " (no features, not in bytes, or the lab measured the "
                    "module)");
  }
  if (data.train.blocked + data.validation.blocked > 0) {
    absl::StrAppend(&data.snapshot, "; ",
                    data.train.blocked + data.validation.blocked,
                    " blocked (module, pipeline) targets left out");
  }
  return data;
}

}  // namespace phaseloop::offline_rl
