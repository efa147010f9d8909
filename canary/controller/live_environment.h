#ifndef PHASELOOP_CANARY_CONTROLLER_LIVE_ENVIRONMENT_H_
#define PHASELOOP_CANARY_CONTROLLER_LIVE_ENVIRONMENT_H_

// The rollout's real surroundings (RolloutEnvironment of
// canary_controller.h):
//   - builds: the service's handler through its own Bazel workspace and the
//     phaseloop toolchain (canary/service/handler_build), stable's policy
//     and the candidate's artifact from the policy store, plus an -O0
//     reference; the three must agree on every check request
//     (canary/service/handler_check) before anything serves; the builds'
//     decisions travel as a CI job's do — shipped to phaseloop.decisions,
//     ingested from it into the replay buffer — so the final reward joins
//     them;
//   - the error budget: the latest statuses on phaseloop.budget through the
//     service's error budget policy (canary/budget_policy);
//   - instances: a reward engine (`phaseloop rewards run`, its own consumer
//     group) and three `phaseloop canary serve` processes — stable and
//     baseline on stable's handler, canary on the candidate's — each a
//     background process recorded in the run (pid and start time), so a
//     restarted controller stops what a killed one left;
//   - traffic: the open-loop load generator (canary/load) in this process,
//     split stable / baseline / canary = 1 - 2w / w / w;
//   - evidence: the reward engine's Reward records on phaseloop.rewards;
//   - outcome: promotion (stable channel) or a `failed` verdict in the
//     policy store, through its client; the final reward (source "canary")
//     and deployment records in the replay buffer.

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "canary/controller/canary_controller.h"
#include "canary/controller/service_config.h"
#include "canary/load/open_loop_load.h"
#include "common/metrics/metrics_http_server.h"
#include "common/metrics/metrics_registry.h"
#include "offline_rl/policy_store/policy_store_client.h"

namespace phaseloop::canary {

struct LiveEnvironmentOptions {
  ServiceConfig service;
  std::string phaseloop_binary;  // this binary: serve, rewards run
  std::string phaseloop_cc;
  std::string bazel_shims_dir;
  std::string zlib_source_dir;  // resolved from service.handler_zlib
  std::string kafka;            // bootstrap servers
  std::string buffer_path;
  // Nested Bazel work directory shared by the service's builds (its server
  // and caches make a rebuild of the same policy fast).
  std::string build_dir;
  // This run's own directory: handler copies, logs, address files.
  std::string run_dir;
  std::string state_dir;  // to count the service's other running canaries
  std::optional<double> staging_lower_bound;
  // Benchmarks: the canary instance busy-waits this fraction of every
  // handler call (`canary serve --slowdown`). 0: off.
  double canary_slowdown = 0;
  std::ostream* progress = nullptr;  // lines of progress; null: none
};

class LiveEnvironment : public RolloutEnvironment {
 public:
  LiveEnvironment(LiveEnvironmentOptions options,
                  std::unique_ptr<policy_store::PolicyStore> store,
                  const std::atomic<bool>* stop_flag);
  ~LiveEnvironment() override;

  int64_t NowMs() override;
  void SleepUntilMs(int64_t ms) override;
  bool StopRequested() override;
  absl::StatusOr<VariantBuilds> BuildAndCheck(
      const v1::CanaryRun& run) override;
  absl::StatusOr<RolloutAllowance> Allowance(const v1::CanaryRun& run) override;
  std::vector<std::string> EndedInstances(const v1::CanaryRun& run) override;
  absl::Status StartInstances(v1::CanaryRun* run) override;
  absl::Status StopInstances(const v1::CanaryRun& run) override;
  absl::Status SetCanaryWeight(double weight) override;
  absl::StatusOr<StepEvidence> CollectStep(const v1::CanaryRun& run,
                                           int64_t from_ms,
                                           int64_t to_ms) override;
  int64_t WindowSettleMs() override;
  int64_t RewardWindowMs() override;
  absl::Status Promote(const v1::CanaryRun& run) override;
  absl::Status MarkFailed(const v1::CanaryRun& run,
                          const std::string& reason) override;
  absl::Status RecordOutcome(const v1::CanaryRun& run) override;
  void Progress(const std::string& line) override;
  void StateSaved(const v1::CanaryRun& run) override;

  // Serves /metrics on host:port (port 0: any free one) until destroyed:
  // the run's phase, step, canary share, steps judged by outcome, final
  // reward, and the load's requests and errors per instance. Returns the
  // port.
  absl::StatusOr<int> ServeMetrics(const std::string& host, int port);

  // The handler libraries a run serves (copies in its run directory).
  std::string StableHandlerPath() const;
  std::string CandidateHandlerPath() const;

 private:
  std::vector<std::string> ChildEnvironment() const;
  absl::StatusOr<std::string> FetchArtifact(const std::string& version,
                                            const std::string& name);
  // The handler builds' decisions: the build spool's unshipped files
  // produced to phaseloop.decisions on options_.kafka (marked shipped once
  // acknowledged), then a bounded ingest of that topic into the buffer.
  absl::Status ShipAndIngestDecisions(const v1::CanaryRun& run);
  absl::Status StartServe(v1::CanaryRun* run, const std::string& group,
                          const std::string& handler,
                          const std::string& deployment_id,
                          const std::string& policy_version);

  LiveEnvironmentOptions options_;
  std::unique_ptr<policy_store::PolicyStore> store_;
  const std::atomic<bool>* stop_flag_;
  std::unique_ptr<load::OpenLoopLoad> load_;
  void UpdateLoadMetrics();
  metrics::MetricsRegistry registry_;
  std::unique_ptr<metrics::MetricsHttpServer> metrics_server_;
  int64_t load_metrics_updated_ms_ = 0;
};

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_LIVE_ENVIRONMENT_H_
