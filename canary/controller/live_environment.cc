#include "canary/controller/live_environment.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "canary/budget_policy/exploration_allowance.h"
#include "canary/controller/canary_state_store.h"
#include "canary/controller/run_outcome_records.h"
#include "canary/service/handler_build.h"
#include "canary/service/handler_check.h"
#include "common/files/atomic_file.h"
#include "common/kafka/state_dir.h"
#include "common/kafka/topics.h"
#include "compiler_driver/cc_wrapper/spool_shipping.h"
#include "replay_buffer/decision_producer.h"
#include "replay_buffer/kafka_ingest.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/slo/budget_reader.h"

namespace phaseloop::canary {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kKafkaReadTimeoutMs = 10000;

// The most pessimistic lower end of the candidate's staging speedup
// intervals in the buffer (one per workload staged; exp(value_low)); unset
// when it was never staged. Scans the buffer once.
absl::StatusOr<std::optional<double>> StagingLowerBound(
    const std::string& buffer_path, const std::string& policy_version) {
  std::error_code error;
  if (!fs::exists(buffer_path, error)) return std::optional<double>();
  replay_buffer::OpenOptions open;
  open.create = false;
  auto buffer = replay_buffer::OpenReplayStore(buffer_path, open);
  if (!buffer.ok()) return buffer.status();
  std::optional<double> lowest;
  auto status =
      (*buffer)->Scan(1000, [&](const replay_buffer::WriteBatch& batch) {
        for (const auto& reward : batch.rewards) {
          if (reward.source() != "staging" ||
              reward.policy_version() != policy_version) {
            continue;
          }
          const double bound = std::exp(reward.value_low());
          if (!lowest || bound < *lowest) lowest = bound;
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return lowest;
}

}  // namespace

LiveEnvironment::LiveEnvironment(
    LiveEnvironmentOptions options,
    std::unique_ptr<policy_store::PolicyStore> store,
    const std::atomic<bool>* stop_flag)
    : options_(std::move(options)),
      store_(std::move(store)),
      stop_flag_(stop_flag) {}

LiveEnvironment::~LiveEnvironment() {
  if (load_ != nullptr) load_->Stop();
}

int64_t LiveEnvironment::NowMs() { return absl::ToUnixMillis(absl::Now()); }

void LiveEnvironment::SleepUntilMs(int64_t ms) {
  while (!StopRequested()) {
    if (NowMs() - load_metrics_updated_ms_ >= 1000) UpdateLoadMetrics();
    const int64_t left = ms - NowMs();
    if (left <= 0) return;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min<int64_t>(left, 100)));
  }
}

bool LiveEnvironment::StopRequested() {
  return stop_flag_ != nullptr && stop_flag_->load();
}

void LiveEnvironment::Progress(const std::string& line) {
  if (options_.progress == nullptr) return;
  *options_.progress << absl::FormatTime("%H:%M:%S ", absl::Now(),
                                         absl::LocalTimeZone())
                     << line << std::endl;
}

absl::StatusOr<int> LiveEnvironment::ServeMetrics(const std::string& host,
                                                  int port) {
  auto server = metrics::MetricsHttpServer::Start(registry_, host, port);
  if (!server.ok()) return server.status();
  metrics_server_ = *std::move(server);
  return metrics_server_->port();
}

void LiveEnvironment::StateSaved(const v1::CanaryRun& run) {
  static const char* kPhases[] = {"created",  "building",  "starting",
                                  "stepping", "promoting", "rolling_back",
                                  "aborting", "promoted",  "rolled_back",
                                  "refused",  "aborted"};
  for (const char* phase : kPhases) {
    registry_
        .AddGauge("phaseloop_canary_phase",
                  "1 for the rollout's current phase, 0 for the others",
                  {{"phase", phase}})
        .Set(run.phase() == phase ? 1 : 0);
  }
  registry_
      .AddGauge("phaseloop_canary_step",
                "steps judged so far (the current step is this + 1)")
      .Set(run.steps_size());
  registry_.AddGauge("phaseloop_canary_steps_planned", "steps in the plan")
      .Set(run.plan_size());
  std::map<std::string, int> outcomes = {
      {"Pass", 0}, {"Fail", 0}, {"Inconclusive", 0}, {"Error", 0}};
  for (const auto& step : run.steps()) ++outcomes[step.outcome()];
  for (const auto& [outcome, count] : outcomes) {
    registry_
        .AddGauge("phaseloop_canary_steps_judged",
                  "judged steps of this rollout by outcome",
                  {{"outcome", outcome}})
        .Set(count);
  }
  if (run.has_final_reward()) {
    registry_
        .AddGauge("phaseloop_canary_final_reward",
                  "the final reward written to the replay buffer")
        .Set(run.final_reward());
  }
  registry_
      .AddGauge("phaseloop_canary_resumes",
                "times this rollout was resumed after a stop")
      .Set(run.resumes());
}

void LiveEnvironment::UpdateLoadMetrics() {
  load_metrics_updated_ms_ = NowMs();
  if (load_ == nullptr) return;
  const load::LoadResults results = load_->Snapshot();
  for (const auto& target : results.targets) {
    registry_
        .AddGauge("phaseloop_canary_load_requests",
                  "requests the load generator finished, per instance",
                  {{"instance", target.name}})
        .Set(static_cast<double>(target.done()));
    registry_
        .AddGauge("phaseloop_canary_load_errors",
                  "requests without a 2xx answer, per instance",
                  {{"instance", target.name}})
        .Set(static_cast<double>(target.error_count()));
  }
  for (const auto& target : load_->targets()) {
    registry_
        .AddGauge("phaseloop_canary_traffic_weight",
                  "share of the traffic each instance is routed now",
                  {{"instance", target.name}})
        .Set(target.weight);
  }
}

std::string LiveEnvironment::StableHandlerPath() const {
  return options_.run_dir + "/stable.so";
}

std::string LiveEnvironment::CandidateHandlerPath() const {
  return options_.run_dir + "/candidate.so";
}

absl::StatusOr<std::string> LiveEnvironment::FetchArtifact(
    const std::string& version, const std::string& name) {
  auto fetched = store_->GetVersion(version);
  if (!fetched.ok()) {
    return absl::Status(fetched.status().code(),
                        absl::StrCat("policy store: ", version, ": ",
                                     fetched.status().message()));
  }
  const std::string path =
      absl::StrCat(options_.run_dir, "/", name, ".plpolicy");
  if (auto s = files::WriteFileAtomically(path, fetched->artifact_file);
      !s.ok()) {
    return s;
  }
  return path;
}

absl::Status LiveEnvironment::ShipAndIngestDecisions(const v1::CanaryRun& run) {
  // As a CI job: every unshipped spool file to phaseloop.decisions, marked
  // shipped once Kafka acknowledged all of it.
  const std::string spool = options_.build_dir + "/spool";
  const std::string& bootstrap = options_.kafka;
  absl::StatusOr<cc_wrapper::SpoolShipment> shipment = cc_wrapper::ShipSpool(
      spool, [&](const std::vector<const v1::DecisionBatch*>& batches) {
        return replay_buffer::ProduceDecisionBatches(bootstrap, batches,
                                                     std::chrono::seconds(30));
      });
  if (!shipment.ok()) return shipment.status();
  if (!shipment->kept.empty()) {
    const absl::Status& first = shipment->kept.front().second;
    return absl::Status(
        first.code(),
        absl::StrCat(shipment->kept.size(),
                     " spool files were not shipped to Kafka (they stay in ",
                     spool,
                     " for the next build or `phaseloop decisions "
                     "ship --spool ",
                     spool, " --kafka ", bootstrap, "`): ", first.message()));
  }
  // As `phaseloop buffer ingest`, bounded: what the topic holds now. A
  // consumer group of this run's own (offsets stored in the buffer), so no
  // other ingest shares its partitions; it reads the topic from its start
  // once per run, and what the buffer has already is upserted unchanged.
  auto buffer = replay_buffer::OpenReplayStore(options_.buffer_path);
  if (!buffer.ok()) return buffer.status();
  replay_buffer::IngestOptions ingest;
  ingest.bootstrap_servers = bootstrap;
  ingest.group = "phaseloop-canary-decisions-" + run.canary_id();
  ingest.topic = "";
  ingest.decisions_topic = std::string(kafka::kDecisionsTopic);
  ingest.exit_at_end = true;
  ingest.idle_exit = std::chrono::seconds(10);
  ingest.run_limit = std::chrono::seconds(120);
  // One member, briefly: a short session and quick fetches, as `rewards
  // run` sets them (6000 ms is the least a broker accepts by default).
  ingest.consumer_config = {{"session.timeout.ms", "6000"},
                            {"heartbeat.interval.ms", "600"},
                            {"fetch.wait.max.ms", "100"}};
  if (!options_.state_dir.empty()) {
    ingest.lost_records_log = kafka::LostRecordsLogPath(options_.state_dir);
  }
  absl::StatusOr<replay_buffer::IngestStats> stats =
      replay_buffer::RunKafkaIngest(**buffer, ingest, nullptr, stop_flag_);
  if (!stats.ok()) return stats.status();
  Progress(absl::StrCat("decisions: ", shipment->decisions, " shipped to ",
                        kafka::kDecisionsTopic, " from ",
                        shipment->shipped.size(), " spool files; ",
                        stats->decisions, " ingested into ",
                        options_.buffer_path));
  if (stats->malformed > 0 || stats->records_lost > 0) {
    return absl::DataLossError(absl::StrCat(
        stats->malformed, " records of ", kafka::kDecisionsTopic,
        " were not decisions and ", stats->records_lost,
        " were deleted before they were read (stderr names them)"));
  }
  if (stats->ended_by == "limit") {
    return absl::DeadlineExceededError(absl::StrCat(
        "reading ", kafka::kDecisionsTopic, " stopped at its ",
        std::chrono::duration_cast<std::chrono::seconds>(ingest.run_limit)
            .count(),
        " s limit before its end: this build's decisions may not all be in ",
        options_.buffer_path,
        " (a long topic: `phaseloop buffer ingest` reads the rest)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<VariantBuilds> LiveEnvironment::BuildAndCheck(
    const v1::CanaryRun& run) {
  if (auto s = files::MakeDirectories(options_.run_dir); !s.ok()) return s;
  HandlerBuildOptions base;
  base.workspace_template = options_.service.handler_workspace;
  base.zlib_source_dir = options_.zlib_source_dir;
  base.opt_level = options_.service.handler_opt_level;
  base.work_dir = options_.build_dir;
  base.phaseloop_cc = options_.phaseloop_cc;
  base.phaseloop_cli = options_.phaseloop_binary;
  base.bazel_shims_dir = options_.bazel_shims_dir;

  // Stable: the store's version, or plain -O3 when the store has none.
  HandlerBuildOptions stable = base;
  stable.name = "stable";
  if (run.stable_version().empty()) {
    stable.policy_file = options_.run_dir + "/baseline.policy";
    if (auto s = files::WriteFileAtomically(stable.policy_file, "baseline\n");
        !s.ok()) {
      return s;
    }
  } else {
    auto artifact = FetchArtifact(run.stable_version(), "stable");
    if (!artifact.ok()) return artifact.status();
    stable.artifact_file = *artifact;
  }
  HandlerBuildOptions candidate = base;
  candidate.name = "candidate";
  auto artifact = FetchArtifact(run.candidate_version(), "candidate");
  if (!artifact.ok()) return artifact.status();
  candidate.artifact_file = *artifact;
  HandlerBuildOptions reference = base;
  reference.name = "O0";
  reference.opt_level = "O0";
  reference.policy_file = options_.run_dir + "/reference.policy";
  if (auto s = files::WriteFileAtomically(reference.policy_file, "baseline\n");
      !s.ok()) {
    return s;
  }

  VariantBuilds builds;
  std::vector<HandlerUnderCheck> handlers;
  for (const auto* options : {&stable, &candidate, &reference}) {
    Progress(absl::StrCat("building the ", options->name, " handler"));
    auto built = BuildHandler(*options);
    if (!built.ok()) return built.status();
    Progress(absl::StrFormat("built %s in %.1f s (%d compiles)", options->name,
                             built->build_seconds, built->decisions));
    const std::string copy = options->name == "stable" ? StableHandlerPath()
                             : options->name == "candidate"
                                 ? CandidateHandlerPath()
                                 : options_.run_dir + "/O0.so";
    std::error_code error;
    fs::copy_file(built->so_path, copy, fs::copy_options::overwrite_existing,
                  error);
    if (error) {
      return absl::InternalError(absl::StrCat(
          "cannot copy ", built->so_path, " to ", copy, ": ", error.message()));
    }
    handlers.push_back({options->name, copy});
    if (options->name == "stable") builds.baseline_build_id = built->build_id;
    if (options->name == "candidate") {
      builds.candidate_build_id = built->build_id;
    }
  }
  // The builds' decisions, through Kafka as a CI job ships them; a problem
  // is a warning, never a failed rollout (the decisions stay in the spool
  // or on the topic for the next try).
  if (auto s = ShipAndIngestDecisions(run); !s.ok()) {
    Progress(absl::StrCat(
        "warning: the builds' decisions did not reach the buffer: ",
        s.message()));
  }
  auto report = CheckHandlersAgree(handlers);
  if (!report.ok()) return report.status();
  Progress(report->Summary());
  if (!report->ok()) {
    return absl::FailedPreconditionError(report->Summary());
  }
  return builds;
}

absl::StatusOr<RolloutAllowance> LiveEnvironment::Allowance(
    const v1::CanaryRun& run) {
  auto budgets =
      slo::ReadLatestBudgets(options_.kafka, std::string(kafka::kBudgetTopic),
                             std::chrono::milliseconds(kKafkaReadTimeoutMs));
  if (!budgets.ok()) return budgets.status();
  ExplorationRequest request;
  request.service = run.service();
  request.budgets = budgets->latest;
  request.candidate_lower_bound = options_.staging_lower_bound;
  if (!request.candidate_lower_bound) {
    auto staged =
        StagingLowerBound(options_.buffer_path, run.candidate_version());
    if (!staged.ok()) return staged.status();
    request.candidate_lower_bound = *staged;
  }
  // The service's rollouts under way that began before this one count
  // against max_concurrent (a later one never stops an earlier one: it is
  // refused instead). A state that cannot be read cannot be counted, so
  // nothing is allowed until it is repaired or removed.
  auto runs = CanaryStateStore(options_.state_dir).List();
  if (!runs.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot count the rollouts under way (max_concurrent): ",
                     runs.status().message(),
                     "; repair or remove that rollout's directory"));
  }
  for (const auto& other : *runs) {
    const bool earlier = other.created_ms() < run.created_ms() ||
                         (other.created_ms() == run.created_ms() &&
                          other.canary_id() < run.canary_id());
    if (other.service() == run.service() && earlier &&
        !IsFinalPhase(other.phase()) && other.phase() != "created") {
      ++request.running_experiments;
    }
  }
  const ExplorationAllowance allowance =
      ComputeExplorationAllowance(options_.service.budget_policy, request);
  RolloutAllowance out;
  out.allowed = allowance.allowed;
  out.max_canary_weight = allowance.max_canary_weight;
  out.tier = allowance.tier;
  out.reasons = allowance.reasons;
  out.budget_remaining = allowance.budget_remaining;
  return out;
}

absl::StatusOr<StepEvidence> LiveEnvironment::CollectStep(
    const v1::CanaryRun& run, int64_t from_ms, int64_t to_ms) {
  auto rewards =
      ReadServiceRewards(options_.kafka, std::string(kafka::kRewardsTopic),
                         run.service(), kKafkaReadTimeoutMs);
  if (!rewards.ok()) return rewards.status();
  StepWindowFilter filter;
  filter.service = run.service();
  filter.baseline_deployment_id = run.baseline_deployment_id();
  filter.canary_deployment_id = run.canary_deployment_id();
  filter.from_ms = from_ms;
  filter.to_ms = to_ms;
  return EvidenceFromRewards(*rewards, filter);
}

int64_t LiveEnvironment::WindowSettleMs() {
  // An SLI window is published a grace second after its end; the engine
  // closes a window at end + lateness once the watermark passes it, which a
  // partition without records holds back for idle_ms, or after close_idle
  // of quiet.
  return options_.service.reward_lateness_ms +
         std::max(options_.service.reward_close_idle_ms,
                  options_.service.reward_idle_ms) +
         2 * options_.service.sli_window_ms + 5000;
}

int64_t LiveEnvironment::RewardWindowMs() {
  return options_.service.reward_window_ms;
}

absl::Status LiveEnvironment::Promote(const v1::CanaryRun& run) {
  auto change =
      store_->Promote(run.candidate_version(), policy_store::kStableChannel);
  return change.status();
}

absl::Status LiveEnvironment::MarkFailed(const v1::CanaryRun& run,
                                         const std::string& reason) {
  std::string text = absl::StrCat("canary ", run.canary_id(), ": ", reason);
  if (text.size() > policy_store::kMaxVerdictReasonBytes) {
    text.resize(policy_store::kMaxVerdictReasonBytes);
  }
  return store_
      ->MarkVersion(run.candidate_version(), policy_store::kVerdictFailed, text)
      .status();
}

absl::Status LiveEnvironment::RecordOutcome(const v1::CanaryRun& run) {
  const replay_buffer::WriteBatch batch = RunOutcomeRecords(run, NowMs());
  auto buffer = replay_buffer::OpenReplayStore(options_.buffer_path);
  if (!buffer.ok()) return buffer.status();
  return (*buffer)->Write(batch);
}

}  // namespace phaseloop::canary
