#include "offline_rl/learner/dataset_reading.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "replay_buffer/objective_values.h"

namespace phaseloop::offline_rl::internal {

using policy_runtime::BuildState;
using policy_runtime::StateDim;

// The content hash of what the learner reads from an episode: without when,
// where and how long it ran, so the same data measured again has the same
// digest (and a retrained artifact the same data snapshot). For objectives
// other than alloc_size, the allocated sizes that records gained with it
// are left out, so those episodes digest as they did before it (the shipped
// text_size default still reproduces byte for byte): every step's
// alloc_size_after, and a mined candidate episode's final_alloc_size
// (search episodes recorded final_alloc_size before, so theirs stays in).
std::string EpisodeDigest(v1::Episode e) {
  e.clear_unix_time_ms();
  e.clear_host();
  e.clear_seconds();
  if (e.objective() != replay_buffer::kObjectiveAllocSize) {
    for (v1::Step& step : *e.mutable_steps()) step.clear_alloc_size_after();
    if (absl::StartsWith(e.behaviour_policy(), kCandidatePrefix)) {
      e.clear_final_alloc_size();
    }
  }
  return ir::ContentHash(e.SerializeAsString());
}

bool IsBlocked(const BlockList& blocked, const std::string& module_hash,
               const std::string& pipeline) {
  const auto it = blocked.find(module_hash);
  return it != blocked.end() && it->second.count(pipeline) > 0;
}

bool HasFeatures(const v1::Step& step) {
  return step.autophase_size() == policy_runtime::kAutophaseCount &&
         step.inst_count_size() == policy_runtime::kInstCountCount;
}

void AppendState(const v1::Step& step, const std::vector<int32_t>& history,
                 int num_actions, std::vector<float>* out) {
  const size_t at = out->size();
  out->resize(at + StateDim(num_actions));
  BuildState(step.autophase(), step.inst_count(), history, num_actions,
             absl::MakeSpan(out->data() + at, StateDim(num_actions)));
}

void InitSet(int num_actions, TransitionSet* set) {
  set->num_actions = num_actions;
  set->state_dim = StateDim(num_actions);
}

void AddTransition(TransitionSet* set, int32_t action, float reward,
                   bool done) {
  set->actions.push_back(action);
  set->rewards.push_back(reward);
  set->done.push_back(done ? 1 : 0);
}

// Every episode id of the split and objective, in id order.
absl::StatusOr<std::vector<std::string>> ListIds(
    replay_buffer::ReplayStore& store, const std::string& split,
    const std::string& objective) {
  replay_buffer::EpisodeFilter filter;
  filter.split = split;
  filter.objective = objective;
  auto keys = store.ListEpisodes(filter);
  if (!keys.ok()) return keys.status();
  std::vector<std::string> ids;
  ids.reserve(keys->size());
  for (const auto& k : *keys) ids.push_back(k.episode_id);
  return ids;
}

// episode_id -> sum over sources of weight * mean final reward.
absl::StatusOr<std::unordered_map<std::string, double>> FinalRewards(
    replay_buffer::ReplayStore& store, const LearnerConfig& config,
    const std::string& split, std::string* digest_input) {
  std::unordered_map<std::string, double> bonus;
  for (const auto& [source, weight] : config.final_reward_weights) {
    if (weight == 0) continue;
    replay_buffer::EpisodeFilter filter;
    filter.split = split;
    filter.objective = config.objective;
    filter.reward_source = source;
    auto keys = store.ListEpisodes(filter);
    if (!keys.ok()) return keys.status();
    for (const auto& k : *keys) {
      bonus[k.episode_id] += weight * k.final_reward;
      absl::StrAppend(digest_input, source, ":", k.episode_id, "=",
                      k.final_reward, ";");
    }
  }
  return bonus;
}

float StepReward(const LearnerConfig& config, const v1::Step& step, bool last,
                 double final_bonus) {
  double r = config.step_reward_weight * step.reward();
  if (last) r += final_bonus;
  return static_cast<float>(r);
}

}  // namespace phaseloop::offline_rl::internal
