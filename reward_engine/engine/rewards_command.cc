#include "reward_engine/engine/rewards_command.h"

#include <algorithm>
#include <iostream>
#include <memory>

#include "common/command/exit_code.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/kafka/state_dir.h"
#include "common/metrics/metrics_http_server.h"
#include "common/metrics/metrics_registry.h"
#include "nlohmann/json.hpp"
#include "replay_buffer/replay_store.h"
#include "reward_engine/engine/reward_engine.h"
#include "reward_engine/slo/slo_config.h"

namespace phaseloop::reward_engine {
namespace {

constexpr char kName[] = "phaseloop rewards run: ";

double P99(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(0.99 *
                                    static_cast<double>(values.size() - 1))];
}

}  // namespace

int RunRewards(const RewardsRunFlags& flags, std::ostream& out,
               std::ostream& err) {
  if (flags.kafka.empty()) {
    err << kName << "--kafka BOOTSTRAP is required (or set PHASELOOP_KAFKA)\n";
    return command::kExitBadInput;
  }
  if (flags.window_ms <= 0 || flags.lateness_ms < 0 || flags.idle_ms < 0 ||
      flags.exit_when_idle_ms < 0 || flags.close_idle_ms < 0) {
    err << kName << "--window-ms must be > 0 and --lateness-ms, --idle-ms, "
        << "--close-idle-ms, --exit-when-idle-ms >= 0\n";
    return command::kExitBadInput;
  }
  if (flags.session_timeout_ms < 1000) {
    err << kName << "--session-timeout-ms " << flags.session_timeout_ms
        << " is too short: give at least 1000 (default "
        << RewardsRunFlags().session_timeout_ms << ")\n";
    return command::kExitBadInput;
  }
  if (flags.group_id.empty()) {
    err << kName << "--group must name a consumer group (default "
        << RewardsRunFlags().group_id << ")\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<std::vector<slo::Slo>> slos =
      slo::LoadSloDirectory(flags.slo_dir, flags.window_ms);
  if (!slos.ok()) {
    err << kName << "--slo-dir " << flags.slo_dir << ": "
        << slos.status().message() << "\n";
    return command::kExitBadInput;
  }
  // The metrics port is taken before the buffer is opened: a port that is
  // busy or out of range leaves no new buffer file behind.
  metrics::MetricsRegistry registry;
  std::unique_ptr<metrics::MetricsHttpServer> server;
  if (flags.metrics_port >= 0) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsHttpServer>> started =
        metrics::MetricsHttpServer::Start(registry, flags.metrics_host,
                                          flags.metrics_port);
    if (!started.ok()) {
      err << kName << "--metrics-port " << flags.metrics_port << ": "
          << started.status().message() << "\n";
      return command::kExitBadInput;
    }
    server = *std::move(started);
    err << kName << "metrics at http://" << flags.metrics_host << ":"
        << server->port() << "/metrics" << std::endl;
  }

  absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> store =
      replay_buffer::OpenReplayStore(flags.buffer);
  if (!store.ok()) {
    err << kName << store.status().message() << "\n";
    return command::kExitBadInput;
  }

  EngineOptions options;
  options.bootstrap_servers = flags.kafka;
  options.group_id = flags.group_id;
  options.windows.window_ms = flags.window_ms;
  options.windows.lateness_ms = flags.lateness_ms;
  options.windows.idle_ms = flags.idle_ms;
  options.slos = *std::move(slos);
  options.exit_when_idle = std::chrono::milliseconds(flags.exit_when_idle_ms);
  options.metrics = &registry;
  options.progress = &err;
  const std::string state = kafka::DefaultStateDir();  // kafka/state_dir.h
  options.spool_dir = kafka::SpoolDirPath(state, "rewards");
  options.lost_records_log = kafka::LostRecordsLogPath(state);
  options.close_idle_after = std::chrono::milliseconds(flags.close_idle_ms);
  // Fast rejoin by default: a killed engine's partitions move after one
  // session timeout (heartbeats at a tenth of it), and fetches answer
  // within 100 ms instead of librdkafka's 500.
  const int64_t session_ms =
      flags.quick_group ? 4000 : flags.session_timeout_ms;
  options.consumer_config = {
      {"session.timeout.ms", std::to_string(session_ms)},
      {"heartbeat.interval.ms",
       std::to_string(std::max<int64_t>(100, session_ms / 10))},
      {"fetch.wait.max.ms", "100"}};
  err << kName << options.slos.size() << " SLOs from " << flags.slo_dir
      << "; window " << flags.window_ms << " ms, lateness " << flags.lateness_ms
      << " ms, idle " << flags.idle_ms << " ms, close when quiet after "
      << flags.close_idle_ms << " ms; group " << flags.group_id << " (session "
      << session_ms << " ms)"
      << "; SIGINT/SIGTERM stops" << std::endl;
  absl::StatusOr<EngineStats> stats =
      RunRewardEngine(**store, options, command::StopFlagOnSignals());
  if (!stats.ok()) {
    err << kName << stats.status().message()
        << " (restarting resumes from the offsets stored in " << flags.buffer
        << ")\n";
    const absl::StatusCode code = stats.status().code();
    return code == absl::StatusCode::kInvalidArgument ||
                   code == absl::StatusCode::kFailedPrecondition
               ? command::kExitBadInput
               : command::kExitInternal;
  }
  const double p99 = P99(stats->emission_latency_ms);
  if (flags.json) {
    nlohmann::json j = {
        {"records", stats->records},
        {"merged", stats->merged},
        {"duplicates", stats->duplicates},
        {"late", stats->late},
        {"replayed", stats->replayed},
        {"dead_letters", stats->dead_letters},
        {"records_lost", stats->records_lost},
        {"windows_closed", stats->windows_closed},
        {"rewards", stats->rewards},
        {"budget_statuses", stats->budget_statuses},
        {"budget_history_windows", stats->history_windows},
        {"transactions", stats->transactions},
        {"redelivered", stats->redelivered},
        {"emission_latency_p99_ms", p99},
    };
    if (stats->watermark_ms != kNoTime) j["watermark_ms"] = stats->watermark_ms;
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << "records          " << stats->records << "\n"
        << "merged           " << stats->merged << "\n"
        << "duplicates       " << stats->duplicates << "\n"
        << "late             " << stats->late << "\n"
        << "replayed         " << stats->replayed << "\n"
        << "dead letters     " << stats->dead_letters << "\n"
        << "records lost     " << stats->records_lost
        << (stats->records_lost > 0
                ? " (deleted from Kafka before they were read; named above)"
                : "")
        << "\n"
        << "windows closed   " << stats->windows_closed << "\n"
        << "rewards          " << stats->rewards << "\n"
        << "budget statuses  " << stats->budget_statuses << "\n"
        << "budget history   " << stats->history_windows
        << " windows (seeded at start)\n"
        << "emission p99 ms  " << p99 << "\n";
  }
  return command::kExitOk;
}

void AddRewardsCommand(CLI::App& app, int& exit_code) {
  CLI::App* rewards = command::AddCommandGroup(
      app, "rewards", "The reward engine: canary SLIs to log(SLO/p95) rewards");
  auto [run, flags] = command::AddSubcommand<RewardsRunFlags>(
      *rewards, "run",
      "Consume SLI windows, emit rewards to Kafka and the replay buffer "
      "(effectively once), late windows, dead letters and error budgets",
      exit_code, [](const RewardsRunFlags& f) {
        return RunRewards(f, std::cout, std::cerr);
      });
  command::AddKafkaOption(*run, flags->kafka);
  run->add_option("--buffer", flags->buffer,
                  "replay buffer file (created if missing)")
      ->required();
  run->add_option("--slo-dir", flags->slo_dir,
                  "directory of OpenSLO YAML files (*.yaml)")
      ->capture_default_str();
  run->add_option("--window-ms", flags->window_ms,
                  "event-time tumbling window length")
      ->capture_default_str();
  run->add_option("--lateness-ms", flags->lateness_ms,
                  "watermark lag behind the newest event time (an SLI "
                  "window's end): a window closes once data past its end "
                  "plus this arrives")
      ->capture_default_str();
  run->add_option("--close-idle-ms", flags->close_idle_ms,
                  "after this long without a record (every partition caught "
                  "up), close the windows that ended --lateness-ms or more "
                  "before the wall clock, so the newest window does not wait "
                  "for a later one's data (0: never)")
      ->capture_default_str();
  run->add_option("--session-timeout-ms", flags->session_timeout_ms,
                  "consumer-group session timeout: a killed engine's "
                  "partitions move to a live one after this long (librdkafka's "
                  "default, 45000, is the old behaviour)")
      ->capture_default_str();
  run->add_option("--idle-ms", flags->idle_ms,
                  "a caught-up partition without records this long no "
                  "longer holds the watermark")
      ->capture_default_str();
  command::AddRenamedOption(*run, "--group", "--group-id", flags->group_id,
                            "consumer group (engines in one group share the "
                            "SLI partitions)",
                            std::cerr)
      ->capture_default_str();
  run->add_option("--metrics-port", flags->metrics_port,
                  "serve /metrics on this port (0: any free port)");
  run->add_option("--metrics-host", flags->metrics_host,
                  "address to serve /metrics on")
      ->capture_default_str();
  run->add_option("--exit-when-idle-ms", flags->exit_when_idle_ms,
                  "stop after this long without a record (0: run until "
                  "SIGINT/SIGTERM)");
  run->add_flag("--json", flags->json, "print the summary as JSON");
  run->add_flag("--quick-group", flags->quick_group,
                "4000 ms sessions (tests on the embedded cluster; a real "
                "broker refuses sessions under 6000 ms by default)");
}

}  // namespace phaseloop::reward_engine
