#ifndef PHASELOOP_OFFLINE_RL_LEARNER_CANARY_EXPLORATION_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_CANARY_EXPLORATION_H_

// Exploration with production as the judge (`phaseloop train
// --explore-untried`, the closed loop's train stage): a speed policy that
// builds the service's code exactly like stable would make an A/A canary
// (and one whose choices production all judged already, a canary that only
// re-measures what is known). Then, like UCB's first rule (every arm once
// before any arm twice), the policy tries the most promising candidate no
// canary has judged yet.
//
// The service's code is the modules canary runs judged (Dataset
// canary_judged: the decisions of the builds they rolled out). On those
// states, with the trained network's values Q:
//  - no such module yet: no exploration;
//  - with the stable policy's choices known (DatasetOptions::stable_version,
//    the loop gives it): the greedy choice differs from stable's on some
//    module: no exploration (the canary compares something new, or rolls
//    a better-known choice back out); without them: the greedy choice on
//    some module is one no run judged there: no exploration;
//  - else the untried candidates are those no run judged on any of them,
//    other than -O3 (every stable-vs-candidate comparison measures against
//    it), not in `skip` (pipelines tried before that never reached a
//    canary: the gate, staging or the error budget stopped them) and with a
//    lab value (a runtime-search evaluation or canary cell) on some
//    training module, so nothing unmeasured reaches a canary;
//  - none: no exploration (production judged every measured candidate);
//  - else the one with the highest mean Q - max Q over those modules, and
//    its output gets a bias just large enough (plus `margin`) to be the
//    greedy choice on every one of them.
// Values are the network's, in reward units times `reward_scale` (the
// learner config's reward.scale); the margin is 0.001 in reward units.
// The bias is a constant on one output, so the artifact stays a plain
// network the compile path evaluates; staging, the publish gate and the
// error budget's tier still stand between it and any traffic, and the next
// training (without the bias) keeps the choice only if the canary's reward
// says so. Deterministic: the same data and network give the same choice.

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "offline_rl/learner/dataset.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::offline_rl {

struct CanaryExploration {
  bool exploring = false;
  int candidate = -1;  // index into the candidates when exploring
  float bias = 0;      // added to its output: reward units * reward_scale
  int modules = 0;     // the canary-judged modules it was chosen on
  std::string reason;  // one sentence: why it explores, or why not
};

// `baseline`: the index of the -O3 candidate (-1: none). `forward` maps raw
// states ([n][state_dim]) to values ([n][candidates]): Learner::Forward.
using QFunction =
    std::function<std::vector<float>(const std::vector<float>& raw_states)>;
CanaryExploration ChooseCanaryExploration(
    const Dataset& data, const QFunction& forward, int baseline,
    double reward_scale, const std::set<std::string>& skip = {});

// Adds `bias` to output `output` of the last layer.
void AddOutputBias(int output, float bias, std::vector<v1::DenseLayer>* layers);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_CANARY_EXPLORATION_H_
