#include "compiler_driver/policy_runtime/state_features.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace phaseloop::policy_runtime {

int StateDim(int num_actions) { return kCountFeatures + 1 + num_actions; }

void BuildState(absl::Span<const int64_t> autophase,
                absl::Span<const int64_t> inst_count,
                absl::Span<const int32_t> actions_taken, int num_actions,
                absl::Span<float> out) {
  assert(autophase.size() == kAutophaseCount);
  assert(inst_count.size() == kInstCountCount);
  assert(out.size() == static_cast<size_t>(StateDim(num_actions)));
  const int64_t total_insts = std::max<int64_t>(inst_count[0], 0);
  const double per_inst =
      1000.0 / static_cast<double>(std::max<int64_t>(1, total_insts));
  auto scaled = [per_inst](int64_t count) {
    return static_cast<float>(std::log1p(
        static_cast<double>(std::max<int64_t>(count, 0)) * per_inst));
  };
  for (int i = 0; i < kAutophaseCount; ++i) out[i] = scaled(autophase[i]);
  for (int i = 0; i < kInstCountCount; ++i) {
    out[kAutophaseCount + i] = scaled(inst_count[i]);
  }
  out[kCountFeatures] =
      static_cast<float>(std::log1p(static_cast<double>(total_insts)));
  float* histogram = out.data() + kCountFeatures + 1;
  std::fill(histogram, histogram + num_actions, 0.0f);
  for (int32_t action : actions_taken) {
    if (action >= 0 && action < num_actions) histogram[action] += 1.0f;
  }
}

}  // namespace phaseloop::policy_runtime
