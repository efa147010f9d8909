#ifndef PHASELOOP_OFFLINE_RL_LEARNER_TEST_BUFFERS_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_TEST_BUFFERS_H_

// Small synthetic-but-real replay buffers for the learner's tests and
// benchmark (testonly): records written with the real ReplayStore, content
// a deterministic function of the arguments.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "offline_rl/learner/dataset.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl::testing {

// Candidate formulation: modules "m<i>" (split "train" for the first
// `train_modules`, then "validation"), each of one of 3 kinds visible in its
// features (a large inst_count[2 + kind]); per module one single-step
// "candidate:<name>" episode (objective alloc_size) per candidate of
// {"oz", "c1", "c2", "c3"}: reward 0 for oz, 0.05 (+ noise) for
// c<kind + 1>, -0.03 (+ noise) for the others. The best candidate of a
// module is therefore c<kind + 1>.
absl::Status WriteCandidateBuffer(replay_buffer::ReplayStore& store,
                                  int train_modules, int validation_modules,
                                  uint64_t seed);

// The candidates file matching WriteCandidateBuffer (JSON), written to `path`.
absl::Status WriteCandidatesFile(const std::string& path);
std::vector<std::string> CandidateNames();  // oz, c1, c2, c3

// Speed policy (candidate formulation, objective runtime): modules "r<i>"
// (split "train" for the first `train_modules`, then "validation"), each of
// one
// of 3 kinds visible in its features; per module one runtime-search
// episode (behaviour replay_buffer::kBehaviourRuntimeSearch, one step of
// features, Episode.pipeline) per pipeline of `pipelines` that is not
// -O3, judged by a staging FinalReward: +0.04 (+ noise) for pipelines[1 +
// kind], -0.02 (+ noise) for the others; and one more episode of the last
// pipeline without a reward (a miscompile, say), which is never a value.
absl::Status WriteRuntimeSearchBuffer(replay_buffer::ReplayStore& store,
                                      const std::vector<std::string>& pipelines,
                                      int train_modules, int held_out_modules,
                                      uint64_t seed);

// A canary run of a speed policy over the runtime-search modules already in
// `store` (WriteRuntimeSearchBuffer's, split `split`): the candidate build
// `build_id`'s decisions, one per module for which `pipeline_of(module_hash,
// kind)` is not empty, made by the policy (OPTIMIZED) at -O3 with that
// pipeline and the module's features as its runtime-search episodes carry
// them; and the run's final reward as the canary controller records it
// (reward_id "canary-run/<run_id>", source "canary", build_id, `reward`).
absl::Status WriteCanaryRun(
    replay_buffer::ReplayStore& store, const std::string& split,
    const std::string& run_id, const std::string& build_id, double reward,
    const std::function<std::string(const std::string& module_hash, int kind)>&
        pipeline_of);

// Step-wise formulation: per module (same splits) `episodes_per_module`
// alloc_size search episodes of `steps` steps over action indices < 122,
// features drifting step by step, and the module's best sequence (the
// episode with the largest return, written as a BestSequence).
absl::Status WriteStepwiseBuffer(replay_buffer::ReplayStore& store,
                                 int train_modules, int validation_modules,
                                 int episodes_per_module, int steps,
                                 uint64_t seed);

// Dataset options over LLVM 16's pass action space (its version, every
// action's name and pipeline), no candidates: what every learner test
// starts from.
DatasetOptions Llvm16DatasetOptions();

}  // namespace phaseloop::offline_rl::testing

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_TEST_BUFFERS_H_
