#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_LIMITS_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_LIMITS_H_

// Bounds a policy artifact must keep to be loaded, in a header of their own
// (no LLVM, no protobuf) so the learner's config checks them before any
// training rather than the export refusing what was trained.

namespace phaseloop::policy_runtime {

// The most steps a stepwise policy may take (its max_steps): each runs an
// action on the module in every compile.
inline constexpr int kMaxStepwiseSteps = 1000;

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_LIMITS_H_
