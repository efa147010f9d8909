// The runtime search's settings and its choices from evaluations, apart
// from the search's steps (runtime_search.cc): the default timings, the
// contenders and winners per module, BOLT's reference and the table
// policy's text.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "staging_harness/runtime_search/runtime_search.h"

namespace phaseloop::runtime_search {

staging::TimingOptions DefaultSearchTiming() {
  staging::TimingOptions timing;
  timing.warmup_passes = 1;
  timing.min_pairs = 3;
  timing.max_pairs = 6;
  timing.budget_s = 20;
  timing.half_width = 0.02;
  // A screen, confirmed later at the full 99 %: five pairs reach 90 %.
  timing.confidence = 0.90;
  return timing;
}

staging::TimingOptions DefaultRunoffTiming() {
  staging::TimingOptions timing;
  timing.warmup_passes = 1;
  timing.min_pairs = 6;
  timing.max_pairs = 20;
  timing.budget_s = 40;
  timing.half_width = 0.01;
  timing.confidence = 0.95;
  return timing;
}

std::vector<const Evaluation*> Contenders(
    const std::vector<Evaluation>& evaluations, const std::string& module_hash,
    int n, double floor) {
  std::vector<const Evaluation*> contenders;
  for (const Evaluation& e : evaluations) {
    if (e.module_hash == module_hash && e.verdict == "measured" &&
        e.speedup > floor) {
      contenders.push_back(&e);
    }
  }
  std::stable_sort(contenders.begin(), contenders.end(),
                   [](const Evaluation* a, const Evaluation* b) {
                     return a->speedup > b->speedup;
                   });
  if (int(contenders.size()) > n) contenders.resize(std::max(n, 0));
  return contenders;
}

std::vector<std::pair<std::string, std::string>> ChooseWinners(
    const std::vector<HotModule>& hot,
    const std::vector<Evaluation>& evaluations,
    const std::vector<Evaluation>& runoff, double floor) {
  std::vector<std::pair<std::string, std::string>> winners;
  for (const HotModule& module : hot) {
    const bool ran_off =
        std::any_of(runoff.begin(), runoff.end(), [&](const Evaluation& e) {
          return e.module_hash == module.module_hash;
        });
    const std::vector<const Evaluation*> best = Contenders(
        ran_off ? runoff : evaluations, module.module_hash, 1, floor);
    if (!best.empty())
      winners.emplace_back(module.module_hash, best[0]->pipeline);
  }
  return winners;
}

double BoltReference(const RuntimeSearchResult& r) {
  if (!r.confirmation) return 1;
  if (!r.policy_table.empty() || r.profile_confirmed) {
    return r.confirmation->speedup;
  }
  // The build flags' own confirmation, not confirmed above 1: BOLT's row is
  // those flags rewritten, so it must beat their figure as well as 1.
  if (!r.candidate_cflags.empty() && r.confirmation->pairs > 0 &&
      r.confirmation->pipeline == "(build flags alone)") {
    return std::max(1.0, r.confirmation->speedup);
  }
  return 1;
}

std::string TablePolicyText(
    const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string text = absl::StrCat(cc_wrapper::kTableHeader, "\n");
  for (const auto& [module_hash, pipeline] : rows) {
    absl::StrAppend(&text, module_hash, "\t", pipeline, "\n");
  }
  return text;
}

}  // namespace phaseloop::runtime_search
