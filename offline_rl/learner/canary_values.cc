#include "offline_rl/learner/canary_values.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/policy_runtime/state_features.h"

namespace phaseloop::offline_rl::internal {
namespace {

// Whether `d` is a choice the candidate policy made and ran, with the
// features a state needs.
bool UsableDecision(const v1::Decision& d) {
  return d.outcome() == v1::OPTIMIZED && !d.module_hash().empty() &&
         d.autophase_size() == policy_runtime::kAutophaseCount &&
         d.inst_count_size() == policy_runtime::kInstCountCount;
}

// What a run says of its build's speed against its baseline: a promoted
// run (final reward > 0) the speed it measured, when recorded
// (relative_value): the controller's pass bonus and clamp at 0 are reward
// shaping, and credited through anchors they would make every promoted
// choice look better than the one it replaced. A rolled-back run keeps its
// final reward, penalty included, so its choice loses its place.
double RunValue(const v1::FinalReward& reward) {
  return reward.value() > 0 && reward.has_relative_value()
             ? reward.relative_value()
             : reward.value();
}

}  // namespace

absl::StatusOr<int> PolicyChoiceOf(
    replay_buffer::ReplayStore& store, const std::string& version,
    const std::string& module_hash, const std::vector<std::string>& opt_levels,
    const std::map<std::string, int>& by_pipeline, int baseline) {
  if (version.empty()) return baseline;
  replay_buffer::DecisionFilter filter;
  filter.policy_version = version;
  filter.module_hash = module_hash;
  filter.opt_levels = opt_levels;
  auto read = store.ReadDecisions(filter);
  if (!read.ok()) return read.status();
  for (const v1::Decision& d : *read) {
    if (d.outcome() != v1::OPTIMIZED) continue;
    const auto c = by_pipeline.find(d.pipeline());
    return c == by_pipeline.end() ? -1 : c->second;
  }
  return -1;
}

absl::StatusOr<std::map<std::string, int>> PolicyChoicesOn(
    replay_buffer::ReplayStore& store, const std::string& version,
    const std::vector<std::string>& module_hashes,
    const std::vector<Candidate>& candidates, int baseline) {
  std::map<std::string, int> by_pipeline;
  for (size_t c = 0; c < candidates.size(); ++c) {
    by_pipeline[candidates[c].pipeline] = static_cast<int>(c);
  }
  std::map<std::string, int> out;
  for (const std::string& module_hash : module_hashes) {
    auto choice = PolicyChoiceOf(store, version, module_hash, {"O2", "O3"},
                                 by_pipeline, baseline);
    if (!choice.ok()) return choice.status();
    out[module_hash] = *choice;
  }
  return out;
}

absl::StatusOr<CanaryCells> ReadCanaryCells(
    replay_buffer::ReplayStore& store, double weight,
    const std::vector<Candidate>& candidates, int baseline,
    const std::function<bool(const std::string&, const std::string&)>& blocked,
    const std::string& split, const std::string& train_split) {
  std::map<std::string, int> by_pipeline;
  for (size_t c = 0; c < candidates.size(); ++c) {
    by_pipeline[candidates[c].pipeline] = static_cast<int>(c);
  }
  replay_buffer::RewardFilter filter;
  filter.source = "canary";
  auto rewards = store.ReadFinalRewards(filter);
  if (!rewards.ok()) return rewards.status();
  // In the order the runs happened: a run against a stable that was itself
  // a canaried choice is anchored on what earlier runs said of it.
  std::stable_sort(rewards->begin(), rewards->end(),
                   [](const v1::FinalReward& a, const v1::FinalReward& b) {
                     return a.unix_time_ms() < b.unix_time_ms();
                   });

  CanaryCells out;
  // (module, candidate) -> (sum of weighted rewards, runs).
  std::map<std::pair<std::string, int>, std::pair<double, int>> sums;
  std::map<std::string, const v1::Decision*> features;  // first per module
  std::vector<std::vector<v1::Decision>> builds;  // keeps `features` alive
  builds.reserve(rewards->size());
  for (const v1::FinalReward& reward : *rewards) {
    if (reward.build_id().empty()) continue;  // a window's, not a run's
    replay_buffer::DecisionFilter decisions;
    decisions.build_id = reward.build_id();
    decisions.opt_levels = {"O2", "O3"};  // where a speed policy acts
    auto read = store.ReadDecisions(decisions);
    if (!read.ok()) return read.status();
    builds.push_back(*std::move(read));
    std::vector<std::string> hashes;
    for (const v1::Decision& d : builds.back()) {
      hashes.push_back(d.module_hash());
    }
    auto known = store.ReadModules(hashes);
    if (!known.ok()) return known.status();
    std::map<std::string, std::string> split_of;
    for (const v1::ModuleRecord& m : *known) {
      split_of[m.module_hash()] = m.split();
    }
    std::set<std::pair<std::string, int>> judged;  // once per run
    std::vector<std::pair<std::pair<std::string, int>, double>> pending;
    for (const v1::Decision& d : builds.back()) {
      const auto known_split = split_of.find(d.module_hash());
      if (known_split == split_of.end() ? split != train_split
                                        : known_split->second != split) {
        continue;  // another split's row
      }
      const auto c = by_pipeline.find(d.pipeline());
      if (!UsableDecision(d) || c == by_pipeline.end()) {
        ++out.skipped;
        continue;
      }
      if (blocked(d.module_hash(), d.pipeline())) {
        ++out.blocked;
        continue;
      }
      // The cell the run judges and what it is worth to it: against -O3
      // (runs recorded without their baseline), the candidate's choice;
      // against stable, the one choice of the two that is not -O3's.
      int judged_candidate = c->second;
      double sign = 1;
      double offset = 0;
      if (reward.has_baseline_policy_version()) {
        auto stable = PolicyChoiceOf(store, reward.baseline_policy_version(),
                                     d.module_hash(), {d.opt_level()},
                                     by_pipeline, baseline);
        if (!stable.ok()) return stable.status();
        if (*stable == c->second) {
          ++out.unchanged;  // the same code on both sides: no evidence
          continue;
        }
        if (*stable < 0) {
          ++out.unanchored;  // stable's choice there is unknown
          continue;
        }
        double anchor = 0;  // stable's choice's value over -O3
        if (*stable != baseline && c->second != baseline) {
          const auto earlier = sums.find({d.module_hash(), *stable});
          if (earlier == sums.end()) {
            ++out.unanchored;  // a difference of two unknown values
            continue;
          }
          anchor = earlier->second.first / earlier->second.second;
        }
        if (c->second == baseline) {
          judged_candidate = *stable;  // back to -O3: stable's choice judged
          sign = -1;
        }
        offset = anchor;
      }
      ++out.decisions;
      features.emplace(d.module_hash(), &d);
      const std::pair<std::string, int> cell{d.module_hash(), judged_candidate};
      if (!judged.insert(cell).second) continue;
      pending.emplace_back(cell, sign * weight * RunValue(reward) + offset);
    }
    // Added after the run's own anchors were read.
    for (const auto& [cell, value] : pending) {
      auto& [sum, runs] = sums[cell];
      if (cell.second != baseline) sum += value;
      ++runs;
    }
    if (!judged.empty()) ++out.runs;
  }
  for (const auto& [cell, sum_runs] : sums) {
    const auto& [module_hash, candidate] = cell;
    const v1::Decision& d = *features.at(module_hash);
    CanaryCell& out_cell = out.cells.emplace_back();
    out_cell.module_hash = module_hash;
    out_cell.candidate = candidate;
    out_cell.runs = sum_runs.second;
    out_cell.value = sum_runs.first / sum_runs.second;
    out_cell.autophase.assign(d.autophase().begin(), d.autophase().end());
    out_cell.inst_count.assign(d.inst_count().begin(), d.inst_count().end());
    absl::StrAppend(&out.digest_input, "canary:", module_hash, "|",
                    candidates[candidate].pipeline, "|", out_cell.runs, "|",
                    out_cell.value, "|",
                    ir::ContentHash(absl::StrCat(
                        absl::StrJoin(out_cell.autophase, ","), "/",
                        absl::StrJoin(out_cell.inst_count, ","))),
                    ";");
  }
  return out;
}

}  // namespace phaseloop::offline_rl::internal
