#include "canary/load/load_command.h"

#include <cmath>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "canary/load/load_report.h"
#include "canary/load/load_spec.h"
#include "canary/load/load_spec_yaml.h"
#include "canary/load/open_loop_load.h"
#include "canary/load/targets.h"
#include "common/command/exit_code.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"

namespace phaseloop::canary::load {
namespace {

constexpr char kName[] = "phaseloop canary load: ";

// "KIND:WEIGHT:BYTES" or "KIND:WEIGHT:MIN-MAX", comma-separated.
absl::StatusOr<std::vector<MixEntry>> ParseMix(const std::string& text) {
  std::vector<MixEntry> mix;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    MixEntry entry;
    entry.seed = mix.size() + 1;
    const std::vector<absl::string_view> bytes =
        parts.size() == 3 ? absl::StrSplit(parts[2], '-')
                          : std::vector<absl::string_view>{};
    if (parts.size() != 3 || parts[0].empty() ||
        !absl::SimpleAtod(parts[1], &entry.weight) || bytes.size() > 2 ||
        !absl::SimpleAtoi(bytes[0], &entry.min_payload_bytes) ||
        !absl::SimpleAtoi(bytes.back(), &entry.max_payload_bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mix \"", item,
          "\": expected KIND:WEIGHT:BYTES or KIND:WEIGHT:MIN-MAX, e.g. "
          "deflate:3:4096,crc32:1:512-65536"));
    }
    entry.kind = std::string(parts[0]);
    mix.push_back(std::move(entry));
  }
  return mix;
}

// The spec from --config and the flags; messages name the flag.
absl::StatusOr<LoadSpec> SpecOf(const LoadFlags& flags) {
  LoadSpec spec;
  if (!flags.config.empty()) {
    auto loaded = LoadSpecFromFile(flags.config);
    if (!loaded.ok()) return loaded.status();
    spec = *std::move(loaded);
  } else {
    if (!flags.rate || !flags.mix ||
        (!flags.duration_s && !flags.max_requests)) {
      return absl::InvalidArgumentError(
          "give --config FILE, or --rate R with --mix KIND:WEIGHT:BYTES,... "
          "and --duration-s S and/or --max-requests N");
    }
  }
  if (flags.rate) spec.rate = *flags.rate;
  if (flags.duration_s) spec.duration_s = *flags.duration_s;
  if (flags.max_requests) spec.max_requests = *flags.max_requests;
  if (flags.seed) {
    if (*flags.seed < 0) {
      return absl::InvalidArgumentError("--seed must be >= 0");
    }
    spec.seed = static_cast<uint64_t>(*flags.seed);
  }
  if (flags.timeout_ms) spec.timeout_s = *flags.timeout_ms / 1000;
  if (flags.max_in_flight) {
    if (*flags.max_in_flight < 1 || *flags.max_in_flight > kMaxInFlight) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-in-flight ", *flags.max_in_flight,
                       " is outside [1, ", kMaxInFlight, "]"));
    }
    spec.max_in_flight = static_cast<int>(*flags.max_in_flight);
  }
  if (flags.arrival) {
    if (*flags.arrival == "uniform") {
      spec.arrival = Arrival::kUniform;
    } else if (*flags.arrival == "poisson") {
      spec.arrival = Arrival::kPoisson;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--arrival \"", *flags.arrival, "\": use uniform or poisson"));
    }
  }
  if (flags.mix) {
    auto mix = ParseMix(*flags.mix);
    if (!mix.ok()) return mix.status();
    spec.mix = *std::move(mix);
  }
  if (absl::Status s = ValidateLoadSpec(spec); !s.ok()) {
    // Fields are named as in the YAML (rate, duration_s, mix[0].kind).
    return absl::InvalidArgumentError(absl::StrCat(
        flags.config.empty() ? "" : "with --config " + flags.config + ": ",
        s.message()));
  }
  return spec;
}

}  // namespace

int RunLoad(const LoadFlags& flags, std::ostream& out, std::ostream& err,
            const std::atomic<bool>* stop) {
  std::vector<Target> parsed;
  for (const std::string& text : flags.targets) {
    auto target = ParseTarget(text);
    if (!target.ok()) {
      err << kName << "--target: " << target.status().message() << "\n";
      return command::kExitBadInput;
    }
    parsed.push_back(*std::move(target));
  }
  auto targets = TargetSet::Create(std::move(parsed));
  if (!targets.ok()) {
    err << kName << "--target: " << targets.status().message() << "\n";
    return command::kExitBadInput;
  }
  if (!(flags.max_error_rate >= 0 && flags.max_error_rate <= 1)) {
    err << kName << "--max-error-rate " << flags.max_error_rate
        << " is outside [0, 1]\n";
    return command::kExitBadInput;
  }
  auto spec = SpecOf(flags);
  if (!spec.ok()) {
    err << kName << spec.status().message() << "\n";
    return command::ExitCodeOf(spec.status());
  }
  auto load = OpenLoopLoad::Start(*spec, *targets);
  if (!load.ok()) {
    err << kName << load.status().message() << "\n";
    return command::ExitCodeOf(load.status());
  }
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(flags.progress_interval_s));
  Clock::time_point next_progress = Clock::now() + interval;
  bool stopped = false;
  while (!(*load)->WaitFor(std::chrono::milliseconds(50))) {
    if (!stopped && stop != nullptr && stop->load()) {
      (*load)->Stop();
      stopped = true;
      err << kName << "stopping on a signal; requests in flight finish"
          << std::endl;
    }
    if (Clock::now() >= next_progress) {
      err << kName << ProgressLine((*load)->Snapshot()) << std::endl;
      next_progress += interval;
    }
  }
  const LoadResults results = (*load)->Snapshot();
  const std::vector<Target> final_targets = (*load)->targets();
  if (flags.json) {
    out << ResultsJson(results, final_targets, *spec) << "\n";
  } else {
    out << ResultsTable(results, final_targets);
  }
  const TargetResults& overall = results.overall;
  const double error_rate = overall.intended > 0
                                ? static_cast<double>(overall.error_count()) /
                                      static_cast<double>(overall.intended)
                                : 0;
  if (error_rate > flags.max_error_rate) {
    err << kName << overall.error_count() << " of " << overall.intended
        << " requests failed (" << error_rate * 100
        << " %), above --max-error-rate " << flags.max_error_rate << "\n";
    return command::kExitInternal;
  }
  return command::kExitOk;
}

void AddLoadCommand(CLI::App* canary, int& exit_code) {
  auto load = command::AddSubcommand<LoadFlags>(
      *canary, "load",
      "Drive open-loop HTTP load at named targets (POST /v1/handle/<kind>) at "
      "a fixed arrival rate, latency from the intended send time; progress "
      "on stderr each second, a table or --json at the end",
      exit_code, [](const LoadFlags& flags) {
        return RunLoad(flags, std::cout, std::cerr,
                       command::StopFlagOnSignals());
      });
  CLI::App* app = load.app;
  LoadFlags* flags = load.flags.get();  // lives as long as the app
  app->add_option("--target", flags->targets,
                  "NAME=HOST:PORT[:WEIGHT] (weight 1 when left out), once per "
                  "target, e.g. --target baseline=127.0.0.1:8080:95 --target "
                  "canary=127.0.0.1:8081:5");
  app->add_option("--config", flags->config,
                  "the load: section of a YAML file (configs/canary/"
                  "load.yaml); flags given as well override it");
  app->add_option_function<double>(
      "--rate", [flags](const double& v) { flags->rate = v; },
      "intended requests per second");
  app->add_option_function<double>(
      "--duration-s", [flags](const double& v) { flags->duration_s = v; },
      "intend requests for this many seconds");
  app->add_option_function<int64_t>(
      "--max-requests", [flags](const int64_t& v) { flags->max_requests = v; },
      "intend at most N requests");
  app->add_option_function<std::string>(
      "--mix", [flags](const std::string& v) { flags->mix = v; },
      "KIND:WEIGHT:BYTES or KIND:WEIGHT:MIN-MAX, comma-separated, e.g. "
      "deflate:3:4096,roundtrip:1:512-16384");
  app->add_option_function<std::string>(
      "--arrival", [flags](const std::string& v) { flags->arrival = v; },
      "uniform (every 1/rate s, the default) or poisson");
  app->add_option_function<int64_t>(
      "--seed", [flags](const int64_t& v) { flags->seed = v; },
      "seed of arrivals, kinds, sizes and routing (default 1)");
  app->add_option_function<double>(
      "--timeout-ms", [flags](const double& v) { flags->timeout_ms = v; },
      "per-request timeout from its send (default 5000)");
  app->add_option_function<int64_t>(
      "--max-in-flight",
      [flags](const int64_t& v) { flags->max_in_flight = v; },
      "requests in flight at once (default 16)");
  app->add_option("--max-error-rate", flags->max_error_rate,
                  "exit 1 when more than this share of intended requests "
                  "failed (default 1: report errors, exit 0)");
  app->add_flag("--json", flags->json, "the results as one JSON object");
}

}  // namespace phaseloop::canary::load
