#include "offline_rl/learner/topk_outcomes.h"

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

// Whether `d` is a topk record whose values are allocated bytes, with the
// features a state needs.
bool UsableTopkRecord(const v1::Decision& d) {
  return d.outcome() == v1::OPTIMIZED && !d.module_hash().empty() &&
         (d.opt_level() == "Os" || d.opt_level() == "Oz") &&
         d.autophase_size() == policy_runtime::kAutophaseCount &&
         d.inst_count_size() == policy_runtime::kInstCountCount &&
         d.topk_measured_size() >= 2 && d.has_oz_alloc_size() &&
         d.oz_alloc_size() > 0 &&
         d.topk_measured(0).pipeline() == kOzPipeline &&
         d.topk_measured(0).value() == d.oz_alloc_size();
}

// Whether record `a` is preferred to `b` for one module.
bool Preferred(const TopkRow& a_row, const v1::Decision& a,
               const TopkRow& b_row, const v1::Decision& b) {
  if (a_row.measured.size() != b_row.measured.size()) {
    return a_row.measured.size() > b_row.measured.size();
  }
  if (a.unix_time_ms() != b.unix_time_ms()) {
    return a.unix_time_ms() > b.unix_time_ms();
  }
  return a.decision_id() < b.decision_id();
}

}  // namespace

double TopkCellValue(int64_t oz_bytes, int64_t bytes) {
  return 1.0 +
         static_cast<double>(oz_bytes - bytes) / static_cast<double>(oz_bytes);
}

absl::StatusOr<TopkRows> ReadTopkRows(
    replay_buffer::ReplayStore& store, const std::vector<Candidate>& candidates,
    const std::function<bool(const std::string&, const std::string&)>& blocked,
    const std::string& split, const std::string& train_split,
    const std::set<std::string>& lab_modules) {
  std::map<std::string, int> by_pipeline;
  for (size_t c = 0; c < candidates.size(); ++c) {
    by_pipeline.emplace(candidates[c].pipeline, static_cast<int>(c));
  }
  replay_buffer::DecisionFilter filter;
  // Where a size policy acts (Oz; Os in records of earlier releases).
  filter.opt_levels = {"Os", "Oz"};
  // Two passes over the records, one at a time (a fleet's decisions do not
  // fit in memory): the modules topk measured, to learn their splits; then
  // one row per module, the preferred record's.
  std::set<std::string> measured_modules;
  absl::Status listed =
      store.ForEachDecision(filter, [&](v1::Decision& d) -> absl::Status {
        if (d.topk_measured_size() > 0)
          measured_modules.insert(d.module_hash());
        return absl::OkStatus();
      });
  if (!listed.ok()) return listed;
  auto known = store.ReadModules(std::vector<std::string>(
      measured_modules.begin(), measured_modules.end()));
  if (!known.ok()) return known.status();
  std::map<std::string, std::string> split_of;
  for (const v1::ModuleRecord& m : *known)
    split_of[m.module_hash()] = m.split();

  TopkRows out;
  // module_hash -> (its row, the record it came from).
  std::map<std::string, std::pair<TopkRow, v1::Decision>> chosen;
  absl::Status read =
      store.ForEachDecision(filter, [&](v1::Decision& d) -> absl::Status {
        if (d.topk_measured_size() == 0) {
          return absl::OkStatus();  // not a topk measurement
        }
        // A module whose first record was shipped between the passes has
        // no split read yet: the next training run reads it (taking it as
        // the user's own code now could put a test module into training).
        if (measured_modules.count(d.module_hash()) == 0) {
          return absl::OkStatus();
        }
        const auto known_split = split_of.find(d.module_hash());
        if (known_split == split_of.end() ? split != train_split
                                          : known_split->second != split) {
          return absl::OkStatus();  // another split's row
        }
        if (!UsableTopkRecord(d) || lab_modules.count(d.module_hash()) > 0) {
          ++out.skipped;
          return absl::OkStatus();
        }
        TopkRow row;
        row.module_hash = d.module_hash();
        row.oz_bytes = d.oz_alloc_size();
        std::set<int> seen;
        for (const v1::MeasuredPipeline& m : d.topk_measured()) {
          const auto c = by_pipeline.find(m.pipeline());
          if (c == by_pipeline.end() || m.value() <= 0 ||
              !seen.insert(c->second).second) {
            continue;
          }
          if (blocked(d.module_hash(), m.pipeline())) {
            ++out.blocked;
            continue;
          }
          row.measured.emplace_back(c->second, m.value());
        }
        const bool beyond_oz =
            row.measured.size() >= 2 ||
            (row.measured.size() == 1 &&
             candidates[row.measured[0].first].pipeline != kOzPipeline);
        if (!beyond_oz) {
          ++out.skipped;
          return absl::OkStatus();
        }
        std::sort(row.measured.begin(), row.measured.end());
        ++out.decisions;
        // The key is copied first: the pair below moves `d` away.
        const std::string module_hash = d.module_hash();
        auto it = chosen.find(module_hash);
        if (it == chosen.end()) {
          chosen.emplace(module_hash,
                         std::make_pair(std::move(row), std::move(d)));
        } else if (Preferred(row, d, it->second.first, it->second.second)) {
          it->second = {std::move(row), std::move(d)};
        }
        return absl::OkStatus();
      });
  if (!read.ok()) return read;
  for (auto& [module_hash, entry] : chosen) {
    TopkRow& row = entry.first;
    const v1::Decision& d = entry.second;
    row.autophase.assign(d.autophase().begin(), d.autophase().end());
    row.inst_count.assign(d.inst_count().begin(), d.inst_count().end());
    std::string cells;
    for (const auto& [c, bytes] : row.measured) {
      absl::StrAppend(&cells, candidates[c].pipeline, "=", bytes, ",");
    }
    absl::StrAppend(
        &out.digest_input, "topk:", module_hash, "|", row.oz_bytes, "|", cells,
        "|",
        ir::ContentHash(absl::StrCat(absl::StrJoin(row.autophase, ","), "/",
                                     absl::StrJoin(row.inst_count, ","))),
        ";");
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace phaseloop::offline_rl::internal
