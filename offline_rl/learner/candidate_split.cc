#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "offline_rl/learner/canary_values.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/dataset_reading.h"
#include "offline_rl/learner/topk_outcomes.h"
#include "replay_buffer/objective_values.h"

// The candidate formulation's table: one row per module (its start state),
// one cell per candidate (its value), from mined candidate episodes, a
// runtime search's evaluations, canary runs and the user's topk builds.

namespace phaseloop::offline_rl {
namespace internal {
namespace {

using policy_runtime::BuildState;
using policy_runtime::StateDim;

// module_hash -> (start state, values, text sizes): a candidate table
// being built, in module order.
using CandidateRows =
    std::map<std::string, std::tuple<std::vector<float>, std::vector<float>,
                                     std::vector<double>>>;

// Adds the canary runs' cells (canary_values.h) to `modules` for a runtime
// policy, weighted by final_reward_weights["canary"] (absent or 0: none).
// A cell the runtime search also measured gets the mean of the two
// sources' values (each source's own mean over its runs counts once):
// the lab's single-module A/B and production's whole-service verdict are
// two estimates of the same gain over -O3, neither overrides the other. A
// module only canary runs judged gets the decision's state and -O3 = 0.
absl::Status AddCanaryCells(replay_buffer::ReplayStore& store,
                            const LearnerConfig& config,
                            const DatasetOptions& options,
                            const BlockList& blocked, const std::string& split,
                            int baseline, CandidateRows* modules,
                            SplitData* out, std::string* digest_input) {
  const auto weight = config.final_reward_weights.find("canary");
  if (weight == config.final_reward_weights.end() || weight->second == 0) {
    return absl::OkStatus();
  }
  const int k = static_cast<int>(options.candidates.size());
  const int n = static_cast<int>(options.pass_names.size());
  auto cells = internal::ReadCanaryCells(
      store, weight->second, options.candidates, baseline,
      [&](const std::string& module_hash, const std::string& pipeline) {
        return IsBlocked(blocked, module_hash, pipeline);
      },
      split, config.train_split);
  if (!cells.ok()) return cells.status();
  for (const internal::CanaryCell& cell : cells->cells) {
    auto& [state, values, object_sizes] = (*modules)[cell.module_hash];
    if (state.empty()) {
      state.resize(StateDim(n));
      BuildState(cell.autophase, cell.inst_count, {}, n, absl::MakeSpan(state));
      values.assign(k, std::numeric_limits<float>::quiet_NaN());
      object_sizes.assign(k, std::numeric_limits<double>::quiet_NaN());
      if (baseline >= 0) values[baseline] = 0;
    }
    std::vector<int>& judged = out->canary_judged[cell.module_hash];
    judged.resize(k, 0);
    judged[cell.candidate] += cell.runs;
    if (cell.candidate == baseline) continue;  // 0 by definition
    float& value = values[cell.candidate];
    const float canary = static_cast<float>(cell.value);
    value = std::isnan(value) ? canary : (value + canary) / 2;
  }
  if (options.stable_version) {
    std::vector<std::string> judged;
    for (const auto& [module_hash, runs] : out->canary_judged) {
      judged.push_back(module_hash);
    }
    auto choices = internal::PolicyChoicesOn(
        store, *options.stable_version, judged, options.candidates, baseline);
    if (!choices.ok()) return choices.status();
    out->stable_choice_read = true;
    out->stable_choice = *std::move(choices);
  }
  out->canary_runs += cells->runs;
  out->canary_decisions += cells->decisions;
  out->skipped_decisions += cells->skipped;
  out->canary_unchanged += cells->unchanged;
  out->canary_unanchored += cells->unanchored;
  out->blocked += cells->blocked;
  absl::StrAppend(digest_input, cells->digest_input);
  return absl::OkStatus();
}

// Adds rows from the user's own topk builds (topk_outcomes.h) to `modules`
// for a size policy of objective alloc_size: modules this split's mined
// episodes measured keep their lab rows.
absl::Status AddTopkRows(replay_buffer::ReplayStore& store,
                         const LearnerConfig& config,
                         const DatasetOptions& options,
                         const BlockList& blocked, const std::string& split,
                         CandidateRows* modules, SplitData* out,
                         std::string* digest_input) {
  const int k = static_cast<int>(options.candidates.size());
  const int n = static_cast<int>(options.pass_names.size());
  std::set<std::string> lab;
  for (const auto& [module_hash, unused] : *modules) lab.insert(module_hash);
  auto rows = internal::ReadTopkRows(
      store, options.candidates,
      [&](const std::string& module_hash, const std::string& pipeline) {
        return IsBlocked(blocked, module_hash, pipeline);
      },
      split, config.train_split, lab);
  if (!rows.ok()) return rows.status();
  for (const internal::TopkRow& row : rows->rows) {
    auto& [state, values, object_sizes] = (*modules)[row.module_hash];
    state.resize(StateDim(n));
    BuildState(row.autophase, row.inst_count, {}, n, absl::MakeSpan(state));
    values.assign(k, std::numeric_limits<float>::quiet_NaN());
    object_sizes.assign(k, std::numeric_limits<double>::quiet_NaN());
    for (const auto& [c, bytes] : row.measured) {
      values[c] =
          static_cast<float>(internal::TopkCellValue(row.oz_bytes, bytes));
      object_sizes[c] = static_cast<double>(bytes);
    }
  }
  out->topk_decisions += rows->decisions;
  out->topk_rows += static_cast<int64_t>(rows->rows.size());
  out->topk_skipped += rows->skipped;
  out->blocked += rows->blocked;
  absl::StrAppend(digest_input, rows->digest_input);
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadCandidateSplit(replay_buffer::ReplayStore& store,
                                const LearnerConfig& config,
                                const DatasetOptions& options,
                                const BlockList& blocked,
                                const std::string& split, SplitData* out) {
  const int k = static_cast<int>(options.candidates.size());
  const int n = static_cast<int>(options.pass_names.size());
  std::map<std::string, int> index;
  for (int c = 0; c < k; ++c) index[options.candidates[c].name] = c;

  std::string digest_input;
  auto bonus = FinalRewards(store, config, split, &digest_input);
  if (!bonus.ok()) return bonus.status();
  auto ids = ListIds(store, split, config.objective);
  if (!ids.ok()) return ids.status();
  // Values keep the latest episode in id order.
  CandidateRows modules;
  // Runtime: a runtime search's single-module evaluations name their
  // candidate by pipeline; the baseline (-O3) is worth 0 on a module by
  // definition (the staging reward is log(t_baseline / t_candidate)) unless
  // an episode measured it (a profile-guided search's profile alone). A
  // cell its runoff timed again takes the runoff's value, whatever the
  // episodes' order: the screen's few pairs over-rate its best.
  const bool runtime = config.objective == kObjectiveRuntime;
  std::set<std::pair<std::string, int>> runoff_cells;
  std::map<std::string, int> by_pipeline;
  for (int c = 0; c < k; ++c) by_pipeline[options.candidates[c].pipeline] = c;
  const std::string set_version = CandidateSetVersion(options.candidates);
  const auto o3 = by_pipeline.find(kRuntimeBaselinePipeline);
  absl::Status status = ForEachEpisode(store, *ids, [&](const v1::Episode& e) {
    std::map<std::string, int>::const_iterator c;
    const bool runoff = runtime && e.behaviour_policy() ==
                                       replay_buffer::kBehaviourRuntimeRunoff;
    if (runtime) {
      if (e.behaviour_policy() != replay_buffer::kBehaviourRuntimeSearch &&
          !runoff) {
        return;
      }
      c = by_pipeline.find(e.pipeline());
    } else {
      if (!absl::StartsWith(e.behaviour_policy(), kCandidatePrefix)) return;
      // Mined for another candidate set: its "c001" may be another pipeline
      // (a second `candidates mine` renumbers them).
      if (absl::StartsWith(e.action_space_version(), kCandidateSetPrefix) &&
          e.action_space_version() != set_version) {
        ++out->skipped_episodes;
        return;
      }
      c = index.find(e.behaviour_policy().substr(sizeof(kCandidatePrefix) - 1));
    }
    const auto found = bonus->find(e.episode_id());
    if (c == (runtime ? by_pipeline.end() : index.end()) ||
        e.steps_size() != 1 || !HasFeatures(e.steps(0)) ||
        (runtime && found == bonus->end())) {
      ++out->skipped_episodes;
      return;
    }
    if (IsBlocked(blocked, e.module_hash(),
                  options.candidates[c->second].pipeline)) {
      ++out->blocked;
      return;
    }
    ++out->episodes;
    absl::StrAppend(&digest_input, EpisodeDigest(e));
    auto& [state, values, object_sizes] = modules[e.module_hash()];
    if (state.empty()) {
      AppendState(e.steps(0), {}, n, &state);
      values.assign(k, std::numeric_limits<float>::quiet_NaN());
      object_sizes.assign(k, std::numeric_limits<double>::quiet_NaN());
      if (runtime && o3 != by_pipeline.end()) values[o3->second] = 0;
    }
    if (runoff) {
      runoff_cells.insert({e.module_hash(), c->second});
    } else if (runtime && runoff_cells.count({e.module_hash(), c->second})) {
      return;  // the runoff's value stands
    }
    values[c->second] = StepReward(config, e.steps(0), true,
                                   found == bonus->end() ? 0 : found->second);
    // The abstain margin's sizes: the whole object for alloc_size, .text
    // otherwise (as text_size and ir_count policies always had).
    const int64_t size = config.objective == replay_buffer::kObjectiveAllocSize
                             ? e.final_alloc_size()
                             : e.final_text_size();
    if (size > 0) object_sizes[c->second] = static_cast<double>(size);
  });
  if (!status.ok()) return status;
  if (runtime) {
    status = AddCanaryCells(store, config, options, blocked, split,
                            o3 == by_pipeline.end() ? -1 : o3->second, &modules,
                            out, &digest_input);
    if (!status.ok()) return status;
  } else if (config.objective == replay_buffer::kObjectiveAllocSize) {
    status = AddTopkRows(store, config, options, blocked, split, &modules, out,
                         &digest_input);
    if (!status.ok()) return status;
  }

  CandidateTable& table = out->table;
  for (const auto& [module_hash, entry] : modules) {
    const auto& [state, values, object_sizes] = entry;
    table.module_hashes.push_back(module_hash);
    table.start_states.insert(table.start_states.end(), state.begin(),
                              state.end());
    table.values.insert(table.values.end(), values.begin(), values.end());
    table.object_sizes.insert(table.object_sizes.end(), object_sizes.begin(),
                              object_sizes.end());
  }
  std::vector<int> all(table.module_hashes.size());
  for (size_t m = 0; m < all.size(); ++m) all[m] = static_cast<int>(m);
  FillCandidateSets(table, all, k, StateDim(n), &out->transitions,
                    &out->demonstrations);
  out->digest = ir::ContentHash(digest_input);
  return absl::OkStatus();
}

}  // namespace internal

void FillCandidateSets(const CandidateTable& table,
                       const std::vector<int>& rows, int num_candidates,
                       int state_dim, TransitionSet* transitions,
                       TransitionSet* demonstrations) {
  const int dim = state_dim;
  for (TransitionSet* set : {transitions, demonstrations}) {
    *set = TransitionSet();
    set->state_dim = state_dim;
    set->num_actions = num_candidates;
  }
  for (int m : rows) {
    const float* state = table.start_states.data() + size_t{1} * m * dim;
    const float* values = table.values.data() + size_t{1} * m * num_candidates;
    transitions->initial_states.insert(transitions->initial_states.end(), state,
                                       state + dim);
    int best = -1;
    for (int c = 0; c < num_candidates; ++c) {
      if (std::isnan(values[c])) continue;
      transitions->states.insert(transitions->states.end(), state, state + dim);
      transitions->next_states.resize(transitions->next_states.size() + dim,
                                      0.0f);
      internal::AddTransition(transitions, c, values[c], true);
      if (best < 0 || values[c] > values[best]) best = c;
    }
    if (best >= 0) {
      demonstrations->states.insert(demonstrations->states.end(), state,
                                    state + dim);
      demonstrations->next_states.resize(
          demonstrations->next_states.size() + dim, 0.0f);
      internal::AddTransition(demonstrations, best, 0.0f, true);
    }
  }
}

}  // namespace phaseloop::offline_rl
