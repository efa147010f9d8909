#include "canary/controller/run_outcome_records.h"

#include "absl/strings/str_cat.h"
#include "canary/controller/step_figures.h"

namespace phaseloop::canary {

replay_buffer::WriteBatch RunOutcomeRecords(const v1::CanaryRun& run,
                                            int64_t now_ms) {
  replay_buffer::WriteBatch batch;
  for (const bool candidate : {false, true}) {
    v1::DeploymentRecord deployment;
    deployment.set_deployment_id(candidate ? run.canary_deployment_id()
                                           : run.baseline_deployment_id());
    deployment.set_build_id(candidate ? run.candidate_build_id()
                                      : run.baseline_build_id());
    deployment.set_policy_version(candidate ? run.candidate_version()
                                            : run.stable_version());
    deployment.set_service(run.service());
    deployment.set_environment("canary");
    deployment.set_role(candidate ? "candidate" : "baseline");
    deployment.set_start_unix_ms(run.created_ms());
    deployment.set_end_unix_ms(now_ms);
    deployment.set_status(run.phase() == "promoting" ? "promoted"
                                                     : "rolled_back");
    batch.deployments.push_back(deployment);
  }
  if (run.has_final_reward()) {
    v1::FinalReward reward;
    reward.set_reward_id(absl::StrCat("canary-run/", run.canary_id()));
    reward.set_source("canary");
    reward.set_policy_version(run.candidate_version());
    reward.set_build_id(run.candidate_build_id());
    reward.set_deployment_id(run.canary_deployment_id());
    reward.set_value(run.final_reward());
    // The speed the run saw against its baseline, before the controller's
    // shaping (pass bonus, clamp at 0, fail penalty).
    reward.set_relative_value(MeasuredRelativeReward(run));
    reward.set_baseline_deployment_id(run.baseline_deployment_id());
    // What the value compares with: the learner credits only the modules
    // whose choice differs from stable's.
    reward.set_baseline_policy_version(run.stable_version());
    reward.set_unix_time_ms(run.created_ms());
    batch.rewards.push_back(reward);
  }
  return batch;
}

}  // namespace phaseloop::canary
