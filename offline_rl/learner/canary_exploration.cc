#include "offline_rl/learner/canary_exploration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace phaseloop::offline_rl {

CanaryExploration ChooseCanaryExploration(const Dataset& data,
                                          const QFunction& forward,
                                          int baseline, double reward_scale,
                                          const std::set<std::string>& skip) {
  const float margin = static_cast<float>(0.001 * reward_scale);
  CanaryExploration out;
  const CandidateTable& table = data.train.table;
  const int k = static_cast<int>(data.candidates.size());
  const size_t rows = table.module_hashes.size();
  if (k == 0 || rows == 0) {
    out.reason = "no candidate table to explore from";
    return out;
  }
  const size_t dim = table.start_states.size() / rows;
  // The service's modules: rows canary runs judged.
  std::vector<const std::vector<int>*> judged;
  std::vector<std::string> hashes;
  std::vector<float> states;
  for (size_t m = 0; m < rows; ++m) {
    const auto it = data.train.canary_judged.find(table.module_hashes[m]);
    if (it == data.train.canary_judged.end()) continue;
    judged.push_back(&it->second);
    hashes.push_back(it->first);
    states.insert(states.end(), table.start_states.begin() + m * dim,
                  table.start_states.begin() + (m + 1) * dim);
  }
  out.modules = static_cast<int>(judged.size());
  if (judged.empty()) {
    out.reason = "no canary has judged the service's code yet";
    return out;
  }
  const std::vector<float> q = forward(states);
  auto runs = [&](size_t m, int c) {
    return c < static_cast<int>(judged[m]->size()) ? (*judged[m])[c] : 0;
  };
  std::vector<int> greedy(judged.size());
  int unlike_stable = 0;
  for (size_t m = 0; m < judged.size(); ++m) {
    const float* row = q.data() + m * k;
    greedy[m] = static_cast<int>(std::max_element(row, row + k) - row);
    if (data.train.stable_choice_read) {
      const auto stable = data.train.stable_choice.find(hashes[m]);
      if (stable == data.train.stable_choice.end() ||
          stable->second != greedy[m]) {
        ++unlike_stable;
      }
      continue;
    }
    if (runs(m, greedy[m]) == 0) {
      out.reason =
          absl::StrCat("the policy already puts a choice no canary judged (",
                       data.candidates[greedy[m]].name,
                       ") on the service's code: no exploration needed");
      return out;
    }
  }
  if (unlike_stable > 0) {
    out.reason = absl::StrCat(
        "the policy builds ", unlike_stable, " of the service's ",
        judged.size(),
        " modules unlike stable: that canary is evidence already, no "
        "exploration");
    return out;
  }
  // Candidates with a value on some training module.
  std::vector<bool> measured(k, false);
  for (size_t m = 0; m < rows; ++m) {
    for (int c = 0; c < k; ++c) {
      if (!std::isnan(table.values[m * k + c])) measured[c] = true;
    }
  }
  int best = -1;
  double best_mean = -std::numeric_limits<double>::infinity();
  for (int c = 0; c < k; ++c) {
    if (c == baseline || !measured[c] ||
        skip.count(data.candidates[c].pipeline) > 0) {
      continue;
    }
    bool tried = false;
    double gap_sum = 0;
    for (size_t m = 0; m < judged.size() && !tried; ++m) {
      tried = runs(m, c) > 0;
      gap_sum += q[m * k + c] - q[m * k + greedy[m]];
    }
    if (tried) continue;
    const double mean = gap_sum / judged.size();
    if (mean > best_mean) {
      best_mean = mean;
      best = c;
    }
  }
  if (best < 0) {
    out.reason = absl::StrCat(
        "canaries have judged every measured candidate on the service's ",
        judged.size(), " modules: no exploration");
    return out;
  }
  float gap = 0;
  for (size_t m = 0; m < judged.size(); ++m) {
    gap = std::max(gap, q[m * k + greedy[m]] - q[m * k + best]);
  }
  out.exploring = true;
  out.candidate = best;
  out.bias = gap + margin;
  // What the policy would run without the bias: "o3_inline_100 on 12".
  std::map<std::string, int> greedy_names;
  for (int g : greedy) ++greedy_names[data.candidates[g].name];
  std::vector<std::string> parts;
  for (const auto& [name, count] : greedy_names) {
    parts.push_back(absl::StrCat(name, " on ", count));
  }
  out.reason = absl::StrFormat(
      "%s (%s); trying %s (%s), which none has judged (valued %.4f below "
      "the greedy choice on average, in log speedup)",
      data.train.stable_choice_read
          ? absl::StrCat("the policy would build the service's ", out.modules,
                         " modules exactly like stable")
          : absl::StrCat("canaries have judged every choice the policy makes "
                         "on the service's ",
                         out.modules, " modules"),
      absl::StrJoin(parts, ", "), data.candidates[best].name,
      data.candidates[best].pipeline, -best_mean / reward_scale);
  return out;
}

void AddOutputBias(int output, float bias,
                   std::vector<v1::DenseLayer>* layers) {
  if (layers->empty()) return;
  v1::DenseLayer& last = layers->back();
  if (output < 0 || output >= last.bias_size()) return;
  last.set_bias(output, last.bias(output) + bias);
}

}  // namespace phaseloop::offline_rl
