#ifndef PHASELOOP_CANARY_CONTROLLER_SERVICE_CONFIG_H_
#define PHASELOOP_CANARY_CONTROLLER_SERVICE_CONFIG_H_

// A service phaseloop rolls out, from configs/services/NAME.yaml (the demo
// service's file documents every field):
//
//   service: demo-service          # the SLI/SLO/reward service name
//   slo_dir: ../slo                 # OpenSLO files (reward engine --slo-dir)
//   handler:                        # canary/service/handler_build.h
//     workspace: ../../canary/service/demo_workspace
//     zlib: debian:zlib             # or a directory holding zlib's sources
//     opt_level: O3
//   instances: {threads: 2, sli_window_ms: 1000}
//   rewards: {window_ms: 2000, lateness_ms: 1000, close_idle_ms: 1500,
//             idle_ms: 3000}
//   load: {...}                     # canary/load/load_spec_yaml.h
//   rollout: {...}                  # rollout_config.h
//   budget_policy: ../error_budget_policy.yaml
//
// Relative paths are relative to the file. Unknown fields are errors;
// every error names the file and the field.

#include <string>

#include "absl/status/statusor.h"
#include "canary/budget_policy/budget_policy_config.h"
#include "canary/controller/rollout_config.h"
#include "canary/load/load_spec.h"

namespace phaseloop::canary {

struct ServiceConfig {
  std::string source;  // the file
  std::string service;
  std::string slo_dir;
  std::string handler_workspace;
  // "debian:<package>" or a directory (resolved by the caller).
  std::string handler_zlib;
  std::string handler_opt_level = "O3";
  int instance_threads = 2;
  int64_t sli_window_ms = 1000;
  int64_t reward_window_ms = 2000;
  int64_t reward_lateness_ms = 1000;
  int64_t reward_close_idle_ms = 1500;
  int64_t reward_idle_ms = 3000;
  load::LoadSpec load;
  RolloutConfig rollout;
  BudgetPolicy budget_policy;
};

absl::StatusOr<ServiceConfig> LoadServiceConfig(const std::string& path);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_SERVICE_CONFIG_H_
