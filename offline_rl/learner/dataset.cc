#include "offline_rl/learner/dataset.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/canary_values.h"
#include "offline_rl/learner/topk_outcomes.h"
#include "replay_buffer/objective_values.h"

namespace phaseloop::offline_rl {
namespace {

using policy_runtime::BuildState;
using policy_runtime::StateDim;

constexpr char kCandidatePrefix[] = "candidate:";

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
constexpr int kReadChunk = 256;  // episodes per ReadEpisodes call

// The buffer's block list: module_hash -> blocked pipelines.
using BlockList = std::map<std::string, std::set<std::string>>;

bool IsBlocked(const BlockList& blocked, const std::string& module_hash,
               const std::string& pipeline) {
  const auto it = blocked.find(module_hash);
  return it != blocked.end() && it->second.count(pipeline) > 0;
}

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

// Calls `visit` with every episode of `ids`, reading in chunks.
template <typename Visit>
absl::Status ForEachEpisode(replay_buffer::ReplayStore& store,
                            const std::vector<std::string>& ids, Visit visit) {
  for (size_t begin = 0; begin < ids.size(); begin += kReadChunk) {
    const size_t end = std::min(ids.size(), begin + kReadChunk);
    auto episodes = store.ReadEpisodes(
        std::vector<std::string>(ids.begin() + begin, ids.begin() + end));
    if (!episodes.ok()) return episodes.status();
    for (const v1::Episode& e : *episodes) visit(e);
  }
  return absl::OkStatus();
}

float StepReward(const LearnerConfig& config, const v1::Step& step, bool last,
                 double final_bonus) {
  double r = config.step_reward_weight * step.reward();
  if (last) r += final_bonus;
  return static_cast<float>(r);
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
    // Final rewards judge the whole episode, not a prefix cut by a block.
    const auto found = bonus->find(e.episode_id());
    const double final_bonus =
        found == bonus->end() || steps < uncut ? 0 : found->second;
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
  // candidate by pipeline; the baseline (-O3) is worth 0 on every module by
  // definition (the staging reward is log(t_baseline / t_candidate)).
  const bool runtime = config.objective == kObjectiveRuntime;
  std::map<std::string, int> by_pipeline;
  for (int c = 0; c < k; ++c) by_pipeline[options.candidates[c].pipeline] = c;
  const auto o3 = by_pipeline.find(kRuntimeBaselinePipeline);
  absl::Status status = ForEachEpisode(store, *ids, [&](const v1::Episode& e) {
    std::map<std::string, int>::const_iterator c;
    if (runtime) {
      if (e.behaviour_policy() != replay_buffer::kBehaviourRuntimeSearch) {
        return;
      }
      c = by_pipeline.find(e.pipeline());
    } else {
      if (!absl::StartsWith(e.behaviour_policy(), kCandidatePrefix)) return;
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

}  // namespace

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
      AddTransition(transitions, c, values[c], true);
      if (best < 0 || values[c] > values[best]) best = c;
    }
    if (best >= 0) {
      demonstrations->states.insert(demonstrations->states.end(), state,
                                    state + dim);
      demonstrations->next_states.resize(
          demonstrations->next_states.size() + dim, 0.0f);
      AddTransition(demonstrations, best, 0.0f, true);
    }
  }
}

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
  auto read = candidate ? ReadCandidateSplit : ReadStepwiseSplit;
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
