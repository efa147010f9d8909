#include "canary/service/serve_command.h"

#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "canary/service/handler_library.h"
#include "canary/service/service_server.h"
#include "canary/service/sli_delivery.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/state_dir.h"
#include "common/kafka/topics.h"
#include "common/metrics/metrics_registry.h"
#include "reward_engine/sli/sli_recorder.h"

namespace phaseloop::canary {
namespace {

constexpr char kName[] = "phaseloop canary serve: ";

// "HOST:PORT" → host and port; false when it is not that.
bool SplitListen(const std::string& listen, std::string& host, int& port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = listen.substr(0, colon);
  return absl::SimpleAtoi(absl::string_view(listen).substr(colon + 1), &port) &&
         port >= 0 && port <= 65535;
}

std::string DefaultInstance() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return absl::StrCat(host[0] ? host : "localhost", ":", getpid());
}

}  // namespace

int RunServe(const ServeFlags& flags, std::ostream& out, std::ostream& err) {
  std::string host;
  int port = 0;
  if (!SplitListen(flags.listen, host, port)) {
    err << kName << "--listen " << flags.listen
        << ": expected HOST:PORT (e.g. 127.0.0.1:0; port 0 picks a free one)\n";
    return command::kExitBadInput;
  }
  if (flags.group != "stable" && flags.group != "baseline" &&
      flags.group != "canary") {
    err << kName << "--group " << flags.group
        << ": expected stable, baseline or canary (a rollout's stable "
           "instance, its fresh baseline, its canary)\n";
    return command::kExitBadInput;
  }
  if (flags.kafka.empty()) {
    err << kName << "no Kafka for the SLI windows: pass --kafka HOST:PORT "
        << "or set " << command::kKafkaEnv
        << " (`phaseloop kafka serve` starts one)\n";
    return command::kExitBadInput;
  }
  std::string spool = flags.spool;
  if (spool.empty()) {
    spool = kafka::SpoolDirPath(
        kafka::DefaultStateDir(),
        absl::StrCat("sli-", flags.service, "-", flags.group));
  }
  if (spool.empty()) {
    err << kName << "no spool directory for undelivered windows: pass "
        << "--spool DIR (or set PHASELOOP_STATE_DIR or HOME)\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<std::unique_ptr<HandlerLibrary>> handler =
      HandlerLibrary::Load(flags.handler);
  if (!handler.ok()) {
    err << kName << "--handler: " << handler.status().message() << "\n";
    return command::kExitBadInput;
  }
  sli::SliRecorderOptions recorder_options;
  recorder_options.service = flags.service;
  recorder_options.group = flags.group;
  recorder_options.instance =
      flags.instance.empty() ? DefaultInstance() : flags.instance;
  recorder_options.deployment_id = flags.deployment_id;
  recorder_options.policy_version = flags.policy_version;
  recorder_options.window_length_ms = flags.window_ms;
  absl::StatusOr<std::unique_ptr<sli::SliRecorder>> recorder =
      sli::SliRecorder::Create(recorder_options);
  if (!recorder.ok()) {
    err << kName << recorder.status().message() << "\n";
    return command::kExitBadInput;
  }

  // Block the stop signals before librdkafka's and the server's threads
  // start (they inherit the mask), so only Wait below receives them.
  command::BlockedStopSignals stop_signals;
  SliDeliveryOptions delivery_options;
  delivery_options.bootstrap_servers = flags.kafka;
  delivery_options.topic = std::string(kafka::kSliTopic);
  delivery_options.spool_dir = spool;
  absl::StatusOr<std::unique_ptr<SliDelivery>> delivery =
      SliDelivery::Create(delivery_options);
  if (!delivery.ok()) {
    err << kName << delivery.status().message() << "\n";
    return command::ExitCodeOf(delivery.status());
  }
  if (std::string said =
          kafka::SpoolRetryMessage((*delivery)->spool_retry(), spool);
      !said.empty()) {
    err << kName << "SLI windows' " << said << "\n";
  }
  if (absl::Status started = (*recorder)->StartFlusher(delivery->get());
      !started.ok()) {
    err << kName << started.message() << "\n";
    return command::kExitInternal;
  }

  metrics::MetricsRegistry registry;
  const std::map<std::string, std::string> labels = {{"service", flags.service},
                                                     {"group", flags.group}};
  metrics::Gauge& delivered =
      registry.AddGauge("phaseloop_service_sli_windows_published",
                        "SLI windows Kafka acknowledged", labels);
  metrics::Gauge& undelivered = registry.AddGauge(
      "phaseloop_service_sli_windows_undelivered",
      "SLI windows kept in the delivery spool (Kafka did not acknowledge "
      "them; the next run produces them again)",
      labels);
  metrics::Gauge& dropped = registry.AddGauge(
      "phaseloop_service_sli_windows_dropped",
      "SLI windows neither delivered nor spooled (the spool could not be "
      "written)",
      labels);
  metrics::Gauge& late = registry.AddGauge(
      "phaseloop_service_sli_late_records",
      "Requests recorded after their window had closed", labels);
  SliDelivery* sink = delivery->get();
  sli::SliRecorder* sli_recorder = recorder->get();
  ServiceServerOptions server_options;
  server_options.host = host;
  server_options.port = port;
  server_options.threads = flags.threads;
  server_options.slowdown = flags.slowdown;
  server_options.refresh_metrics = [&, sink, sli_recorder] {
    const SliDeliveryStats stats = sink->stats();
    delivered.Set(static_cast<double>(stats.delivered));
    undelivered.Set(static_cast<double>(stats.spooled));
    const sli::SliRecorderStats recorded = sli_recorder->stats();
    dropped.Set(static_cast<double>(recorded.windows_dropped));
    late.Set(static_cast<double>(recorded.late_records));
  };
  auto server = ServiceServer::Start(handler->get(), sli_recorder, &registry,
                                     server_options);
  if (!server.ok()) {
    err << kName << server.status().message() << "\n";
    (void)(*recorder)->StopFlusher();
    return command::kExitBadInput;
  }
  const std::string address = absl::StrCat(host, ":", (*server)->port());
  if (!flags.address_file.empty()) {
    absl::Status written =
        files::WriteFileAtomically(flags.address_file, address + "\n");
    if (!written.ok()) {
      err << kName << "--address-file: " << written.message() << "\n";
      server->reset();
      (void)(*recorder)->StopFlusher();
      return command::kExitBadInput;
    }
  }
  out << address << std::endl;
  err << kName << "serving " << flags.service << " [" << flags.group
      << "] from " << flags.handler << " on http://" << address
      << " (POST /v1/handle/{" << absl::StrJoin((*handler)->kinds(), ",")
      << "}, GET /healthz, GET /metrics); SLI windows of " << flags.window_ms
      << " ms to " << kafka::kSliTopic << " at " << flags.kafka
      << "; SIGINT or SIGTERM stops" << std::endl;

  const int signal_number = stop_signals.Wait();
  server->reset();  // stop accepting; in-flight requests finish and record
  absl::Status flushed = (*recorder)->StopFlusher();
  if (!flags.address_file.empty()) unlink(flags.address_file.c_str());
  const SliDeliveryStats stats = sink->stats();
  const sli::SliRecorderStats recorded = (*recorder)->stats();
  err << kName << "stopped by signal " << signal_number << ": "
      << recorded.windows_closed << " SLI windows closed, " << stats.delivered
      << " delivered to Kafka";
  if (stats.spooled > 0) {
    err << ", " << kafka::KeptForRetryMessage(stats.spooled, spool);
  }
  err << "\n";
  if (recorded.windows_dropped > 0 || !flushed.ok()) {
    err << kName << recorded.windows_dropped
        << " SLI windows were lost (neither delivered nor spooled): "
        << flushed.message() << "; check that " << spool << " is writable\n";
    return command::kExitInternal;
  }
  return command::kExitOk;
}

void AddServeCommand(CLI::App* canary, int& exit_code) {
  auto serve = command::AddSubcommand<ServeFlags>(
      *canary, "serve",
      "Serve the demo service over a handler library (POST "
      "/v1/handle/KIND), its request latencies published per window to "
      "Kafka phaseloop.sli, until SIGINT/SIGTERM; prints the bound address",
      exit_code, [](const ServeFlags& flags) {
        return RunServe(flags, std::cout, std::cerr);
      });
  CLI::App* app = serve.app;
  ServeFlags* flags = serve.flags.get();
  app->add_option("--handler", flags->handler,
                  "the handler library (libdemo_handler.so of a handler "
                  "build)")
      ->required();
  app->add_option("--service", flags->service, "service name in the SLIs")
      ->required();
  app->add_option("--group", flags->group, "stable, baseline or canary")
      ->required();
  app->add_option("--deployment-id", flags->deployment_id,
                  "deployment id in the SLIs (joins rewards to the rollout)")
      ->required();
  app->add_option("--policy-version", flags->policy_version,
                  "policy version the handler was built with")
      ->required();
  app->add_option("--listen", flags->listen,
                  "HOST:PORT to listen on (loopback by default; port 0 picks "
                  "a free one)")
      ->capture_default_str();
  app->add_option("--address-file", flags->address_file,
                  "also write the bound address to FILE (atomically; removed "
                  "on a clean stop)");
  app->add_option("--window-ms", flags->window_ms, "SLI window length, ms")
      ->capture_default_str();
  command::AddKafkaOption(*app, flags->kafka);
  app->add_option("--spool", flags->spool,
                  "where undelivered SLI windows are kept (default "
                  "STATE/spool/sli-SERVICE-GROUP, STATE from "
                  "PHASELOOP_STATE_DIR)");
  app->add_option("--instance", flags->instance,
                  "instance id in the SLIs (default HOSTNAME:PID)");
  app->add_option("--threads", flags->threads,
                  "request worker threads; each open keep-alive connection "
                  "holds one")
      ->capture_default_str();
  app->add_option("--slowdown", flags->slowdown,
                  "fault injection for benchmarks: busy-wait this fraction "
                  "of every handler call's time after it (0.10: 10 % "
                  "slower in CPU, as a slower build would be)")
      ->check(command::NonNegativeNumber())  // NaN passed the range
      ->check(command::NumberInRange(0.0, 10.0));
}

}  // namespace phaseloop::canary
