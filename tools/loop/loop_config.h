#ifndef PHASELOOP_TOOLS_LOOP_LOOP_CONFIG_H_
#define PHASELOOP_TOOLS_LOOP_LOOP_CONFIG_H_

// The closed loop's settings: configs/loop/demo.yaml documents every field.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::loop {

struct LoopConfig {
  std::string source;         // the file read
  std::string service;        // configs/services/*.yaml (resolved)
  std::string learner;        // configs/learner/*.yaml (resolved)
  std::string workloads_dir;  // (resolved)
  int iterations = 3;

  std::string explore_workload;
  double explore_budget_s = 100;
  double explore_confirm_budget_s = 20;
  // The runoff (`--runoff-contenders`, `--runoff-budget`): each hot
  // module's best few timed again before the winners are combined.
  int explore_runoff_contenders = 2;
  double explore_runoff_budget_s = 20;
  // `train --explore-untried`: when canaries judged every choice the policy
  // makes on the service, the candidate tries one none has judged.
  bool explore_in_canary = true;

  std::string gate_split = "test";
  std::vector<std::string> gate_workloads;  // empty: the whole split
  double gate_budget_s = 15;
  bool gate_timed = true;  // false: `train --gate-untimed` (outputs only)

  std::string stage_workload;
  double stage_budget_s = 30;
};

// InvalidArgument naming the file and the field; NotFound when unreadable.
absl::StatusOr<LoopConfig> LoadLoopConfig(const std::string& path);

// What the publish gate will ask of `config`'s workloads, checked before
// any stage runs (loop, config check): every workload file under
// workloads_dir loads (the gate loads them all), the gate's split has
// workloads there, and each of gate.workloads is one of that split's.
// InvalidArgument naming the file (`path`) and the field.
absl::Status CheckGateWorkloads(const LoopConfig& config,
                                const std::string& path);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_LOOP_CONFIG_H_
