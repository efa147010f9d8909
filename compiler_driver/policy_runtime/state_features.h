#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_STATE_FEATURES_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_STATE_FEATURES_H_

// The policy network's raw input vector for one state of one module: the one
// feature schema shared by the learner (offline_rl/learner, which trains on
// it) and the driver (which evaluates the exported network on it). Changing
// the layout means a new kStateLayout* name; artifacts record the layout
// they were trained with (FeatureNormalization.layout).
//
// Pure functions, no allocation, safe to call from any thread.

#include <cstdint>

#include "absl/types/span.h"

namespace phaseloop::policy_runtime {

inline constexpr char kStateLayoutV1[] = "autophase56+instcount70+history/v1";
inline constexpr int kAutophaseCount = 56;
inline constexpr int kInstCountCount = 70;
inline constexpr int kCountFeatures = 126;  // 56 Autophase + 70 InstCount

// Size of the raw state vector for an action space of `num_actions`:
// 126 scaled counts + log1p(TotalInsts) + the action histogram.
int StateDim(int num_actions);  // 127 + num_actions

// Raw, unnormalised network input of one state. autophase: 56 values,
// inst_count: 70 values (order of compiler_driver/observation/features.h;
// inst_count[0] is TotalInsts); actions_taken: action indices taken so far
// (each in [0, num_actions); out-of-range indices are ignored).
//   out[i]       = log1p(1000 * count_i / max(1, TotalInsts)) for the 126
//                  counts (autophase then inst_count; negative counts as 0);
//   out[126]     = log1p(TotalInsts);
//   out[127 + a] = number of times action a was taken.
// `out` must have StateDim(num_actions) floats; autophase and inst_count
// must have 56 and 70 values (programmer errors otherwise: asserted).
void BuildState(absl::Span<const int64_t> autophase,
                absl::Span<const int64_t> inst_count,
                absl::Span<const int32_t> actions_taken, int num_actions,
                absl::Span<float> out);

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_STATE_FEATURES_H_
