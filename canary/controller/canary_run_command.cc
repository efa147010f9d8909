#include "canary/controller/canary_run_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "canary/controller/canary_list_command.h"
#include "canary/controller/canary_report.h"
#include "canary/controller/live_environment.h"
#include "canary/controller/step_figures.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "common/files/file_lock.h"
#include "common/kafka/kafka_serve_process.h"
#include "common/process/background_process.h"
#include "common/process/process_gone.h"
#include "common/process/self_executable.h"
#include "offline_rl/policy_store/policy_server_process.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/slo/slo_config.h"
#include "staging_harness/corpus/debian_sources.h"

namespace phaseloop::canary {
namespace {

namespace fs = std::filesystem;

constexpr char kName[] = "phaseloop canary run: ";
// How long a controller waits for a previous one of the same rollout to
// finish stopping (its instances get a few seconds each).
constexpr int64_t kControllerLockWaitMs = 60000;

// phaseloop-cc: --cc, else beside this binary, else as Bazel lays out
// bazel-bin, else on PATH.
std::string FindWrapper(const std::string& flag, const std::string& self) {
  if (!flag.empty()) return flag;
  const std::string beside =
      process::PhaseloopCcBeside(fs::path(self).parent_path().string());
  return beside.empty() ? "phaseloop-cc" : beside;
}

int ExitFor(const v1::CanaryRun& run) {
  if (run.phase() == "promoted") return command::kExitOk;
  if (run.phase() == "rolled_back") return kExitRolledBack;
  if (run.phase() == "refused") return kExitRefused;
  return kExitAborted;
}

void PrintSummary(const v1::CanaryRun& run, const std::string& report,
                  std::ostream& out) {
  out << absl::StrFormat(
      "canary %s: %s (%s against %s)\n", run.canary_id(), run.phase(),
      run.candidate_version(),
      run.stable_version().empty() ? "plain -O3" : run.stable_version());
  out << absl::StrFormat("%-5s %-8s %-13s %6s %9s %12s %12s %10s\n", "step",
                         "canary", "outcome", "score", "windows", "p95 base ms",
                         "p95 cand ms", "rel.reward");
  for (const auto& step : run.steps()) {
    const StepP95 p95 = StepP95Ms(step);
    const double base = p95.baseline_ms, cand = p95.canary_ms;
    out << absl::StrFormat(
        "%-5d %6.1f %%  %-13s %6.0f %4d/%-4d %12.3f %12.3f "
        "%+10.4f\n",
        step.index() + 1, 100 * step.canary_weight(), step.outcome(),
        step.score(), step.baseline_windows(), step.canary_windows(), base,
        cand, step.relative_reward());
  }
  for (const auto& reason : run.final_reasons()) {
    out << "  " << reason << "\n";
  }
  if (run.has_final_reward()) {
    out << absl::StrFormat(
        "final reward %+.4f (replay buffer, source "
        "canary)\n",
        run.final_reward());
  }
  if (!report.empty()) out << "report: " << report << "\n";
}

}  // namespace

int RunCanaryRun(const CanaryRunFlags& flags, std::ostream& out,
                 std::ostream& err) {
  const std::atomic<bool>* stop = command::StopFlagOnSignals();
  auto service = LoadServiceConfig(flags.service);
  if (!service.ok()) {
    err << kName << service.status().message() << "\n";
    return command::kExitBadInput;
  }
  // The reward engine reads the SLO directory: a bad one, or one with no SLO
  // for this service, would show only minutes later, as steps without
  // reward windows.
  auto slos =
      slo::LoadSloDirectory(service->slo_dir, service->reward_window_ms);
  if (!slos.ok()) {
    err << kName << flags.service << ": slo_dir: " << slos.status().message()
        << "\n";
    return command::kExitBadInput;
  }
  if (std::none_of(slos->begin(), slos->end(), [&](const slo::Slo& slo) {
        return slo.service == service->service;
      })) {
    err << kName << flags.service << ": slo_dir " << service->slo_dir
        << " has no SLO whose spec.service is " << service->service
        << ": the reward engine could not reward its windows; add one (see "
           "configs/slo)\n";
    return command::kExitBadInput;
  }
  const std::string state_dir = CanaryStateDir(flags.state_dir);
  if (state_dir.empty()) {
    err << kName
        << "no state directory: pass --state-dir DIR or set "
           "PHASELOOP_STATE_DIR\n";
    return command::kExitBadInput;
  }
  if (auto s = files::MakeDirectories(state_dir + "/canaries"); !s.ok()) {
    err << kName << "cannot create the state directory " << state_dir << ": "
        << s.message() << "\n";
    return command::kExitBadInput;
  }
  const std::string self = process::SelfExecutable();
  // Helpers this command starts live as long as it does.
  std::vector<process::BackgroundProcess> helpers;
  struct StopHelpers {
    std::vector<process::BackgroundProcess>* helpers;
    ~StopHelpers() {
      for (auto it = helpers->rbegin(); it != helpers->rend(); ++it) {
        (void)process::StopBackground(*it);
      }
    }
  } stop_helpers{&helpers};
  // Earlier runs' helper directories (their servers' logs and addresses)
  // are removed once their run is gone: one was left per run, for ever.
  {
    std::error_code error;
    for (const auto& entry :
         fs::directory_iterator(state_dir + "/canaries", error)) {
      const std::string name = entry.path().filename().string();
      int pid = 0;
      if (absl::StartsWith(name, ".helpers-") &&
          absl::SimpleAtoi(name.substr(9), &pid) && process::ProcessGone(pid)) {
        fs::remove_all(entry.path(), error);
      }
    }
  }
  const std::string helper_dir =
      absl::StrCat(state_dir, "/canaries/.helpers-", getpid());
  (void)files::MakeDirectories(helper_dir);

  std::string kafka = flags.kafka;
  if (kafka.empty()) {
    if (const char* env = std::getenv(command::kKafkaEnv)) kafka = env;
  }
  if (kafka.empty()) {
    process::BackgroundProcess cluster;
    auto address =
        kafka::StartKafkaServe(self, helper_dir + "/kafka", &cluster);
    if (!address.ok()) {
      err << kName << "cannot start the embedded Kafka cluster: "
          << address.status().message() << "\n";
      return command::kExitInternal;
    }
    helpers.push_back(cluster);
    kafka = *address;
    err << kName << "embedded Kafka cluster at " << kafka << "\n";
  }

  std::string store_address = flags.policy_store;
  if (store_address.empty() && flags.policy_dir.empty()) {
    if (const char* env = std::getenv(policy_store::kPolicyStoreEnv)) {
      store_address = env;
    }
  }
  if (store_address.empty()) {
    const std::string dir =
        flags.policy_dir.empty() ? state_dir + "/policies" : flags.policy_dir;
    process::BackgroundProcess server;
    auto address = policy_store::ServePolicyDirectory(
        self, dir, helper_dir + "/policy", stop, &server, &err);
    if (!address.ok()) {
      err << kName << "cannot serve the policy store " << dir << ": "
          << address.status().message() << "\n";
      // In use by another run: bad input (exit 2); a store that would not
      // start: internal.
      return absl::IsFailedPrecondition(address.status())
                 ? command::kExitBadInput
                 : command::kExitInternal;
    }
    helpers.push_back(server);
    store_address = *address;
  }
  auto store = policy_store::ConnectPolicyStore(store_address);
  if (!store.ok()) {
    err << kName << store.status().message() << "\n";
    return command::kExitBadInput;
  }

  // The candidate: a file is pushed (to the candidate channel), anything
  // else is a version in the store.
  std::string candidate_version;
  std::error_code error;
  if (fs::is_regular_file(flags.candidate, error)) {
    std::string bytes;
    if (auto s = files::ReadWholeFile(flags.candidate, &bytes); !s.ok()) {
      err << kName << "cannot read --candidate " << flags.candidate << "\n";
      return command::kExitBadInput;
    }
    auto pushed = (*store)->Push(bytes, policy_store::kCandidateChannel,
                                 "canary run --candidate");
    if (!pushed.ok()) {
      err << kName << "--candidate " << flags.candidate << ": "
          << pushed.status().message() << "\n";
      return command::ExitCodeOf(pushed.status());
    }
    candidate_version = pushed->policy_version;
  } else {
    auto fetched = (*store)->GetVersion(flags.candidate);
    if (!fetched.ok()) {
      err << kName << "--candidate " << flags.candidate
          << " is neither a policy file nor a version in the store at "
          << store_address << ": " << fetched.status().message() << "\n";
      return command::kExitBadInput;
    }
    candidate_version = fetched->policy_version;
  }
  std::string stable_version = flags.stable;
  if (stable_version.empty()) {
    auto stable = (*store)->GetChannel(policy_store::kStableChannel);
    if (stable.ok()) stable_version = stable->policy_version;
  } else {
    auto stable = (*store)->GetVersion(stable_version);
    if (!stable.ok()) {
      err << kName << "--stable " << flags.stable << ": "
          << stable.status().message() << "\n";
      return command::kExitBadInput;
    }
    stable_version = stable->policy_version;
  }
  const std::string canary_id =
      flags.canary_id.empty()
          ? absl::StrCat(service->service, "-", candidate_version.substr(0, 12))
          : flags.canary_id;
  if (auto s = CheckCanaryId(canary_id); !s.ok()) {
    err << kName << "--canary-id: " << s.message() << "\n";
    return command::kExitBadInput;
  }
  // The end of a run: its report written, its result printed, its exit.
  auto finish = [&](const v1::CanaryRun& run) {
    const CanaryStateStore state(state_dir);
    auto report = WriteCanaryReport(state, run);
    if (!report.ok()) {
      err << kName << "warning: no report: " << report.status().message()
          << "\n";
    }
    if (flags.json) {
      out << CanaryRunToJson(run) << "\n";
    } else {
      PrintSummary(run, report.ok() ? *report : std::string(), out);
    }
    return ExitFor(run);
  };
  if (stable_version == candidate_version) {
    auto stored = CanaryStateStore(state_dir).Load(canary_id);
    // This rollout made it stable: the same command prints its result
    // again (as after any other end), exit 0.
    if (stored.ok() && stored->candidate_version() == candidate_version &&
        stored->phase() == "promoted") {
      return finish(*stored);
    }
    // Or it made it stable and stopped before recording it (a crash while
    // promoting): then it resumes and finishes.
    if (!stored.ok() || stored->candidate_version() != candidate_version ||
        stored->phase() != "promoting") {
      err << kName << "the candidate " << candidate_version
          << " is stable already: nothing to roll out\n";
      return command::kExitBadInput;
    }
    stable_version = stored->stable_version();
  }
  // One controller per rollout: a controller killed a moment ago may still
  // be stopping its instances; wait for it rather than drive beside it.
  const CanaryStateStore run_store(state_dir);
  const std::string run_dir = run_store.RunDir(canary_id);
  if (auto s = files::MakeDirectories(run_dir); !s.ok()) {
    err << kName << "cannot create " << run_dir << ": " << s.message() << "\n";
    return command::kExitBadInput;
  }
  auto lock = files::FileLock::Acquire(run_store.ControllerLockPath(canary_id),
                                       kControllerLockWaitMs, stop);
  if (!lock.ok()) {
    if (absl::IsCancelled(lock.status())) return kExitResumable;
    err << kName << "canary " << canary_id << ": " << lock.status().message()
        << "; wait for it to end (or stop it) and run again\n";
    return command::kExitBadInput;
  }

  // The buffer the rewards go to, opened now: a text file or a directory
  // given as --buffer was found only when the rewards instance died a
  // step in, its cause in a log (exit 5).
  const std::string buffer_path =
      flags.buffer.empty() ? state_dir + "/buffer.db" : flags.buffer;
  if (auto buffer = replay_buffer::OpenReplayStore(buffer_path); !buffer.ok()) {
    err << kName << (flags.buffer.empty() ? "the buffer " : "--buffer ")
        << buffer_path << ": " << buffer.status().message()
        << "; give a replay buffer (made when missing) or leave --buffer out\n";
    return command::ExitCodeOf(buffer.status()) == command::kExitInternal
               ? command::kExitBadInput
               : command::ExitCodeOf(buffer.status());
  }

  LiveEnvironmentOptions options;
  options.phaseloop_binary = self;
  options.phaseloop_cc = FindWrapper(flags.cc, self);
  options.bazel_shims_dir = flags.bazel_shims;
  if (options.bazel_shims_dir.empty()) {
    // A checkout's third_party/bazel_shims, two levels above the workspace.
    options.bazel_shims_dir =
        (fs::path(service->handler_workspace).parent_path().parent_path() /
         "../third_party/bazel_shims")
            .lexically_normal()
            .string();
  }
  if (absl::StartsWith(service->handler_zlib, "debian:")) {
    const std::string package = service->handler_zlib.substr(7);
    corpus::DebianFetcher fetcher(corpus::DefaultDebianCache());
    auto source = fetcher.Fetch(package, err);
    if (!source.ok()) {
      err << kName << flags.service
          << ": handler.zlib: " << source.status().message() << "\n";
      return command::kExitBadInput;
    }
    options.zlib_source_dir = source->tree;
  } else {
    options.zlib_source_dir = service->handler_zlib;
  }
  options.kafka = kafka;
  options.buffer_path = buffer_path;
  options.build_dir =
      absl::StrCat(state_dir, "/canary-builds/", service->service);
  CanaryStateStore state(state_dir);
  options.run_dir = state.RunDir(canary_id);
  options.state_dir = state_dir;
  options.staging_lower_bound = flags.staging_lower_bound;
  options.canary_slowdown = flags.inject_canary_slowdown;
  options.progress = &err;
  const RolloutConfig rollout = service->rollout;
  const std::string service_name = service->service;
  options.service = *std::move(service);
  LiveEnvironment environment(std::move(options), *std::move(store), stop);
  if (!flags.metrics_listen.empty()) {
    const size_t colon = flags.metrics_listen.rfind(':');
    int port = -1;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(flags.metrics_listen.substr(colon + 1), &port)) {
      err << kName << "--metrics-listen " << flags.metrics_listen
          << ": expected HOST:PORT (e.g. 127.0.0.1:9472; port 0 picks a "
             "free one; \"\" serves none)\n";
      return command::kExitBadInput;
    }
    const std::string host = flags.metrics_listen.substr(0, colon);
    auto bound = environment.ServeMetrics(host, port);
    if (!bound.ok()) {
      err << kName << "--metrics-listen " << flags.metrics_listen << ": "
          << bound.status().message() << "\n";
      return command::kExitBadInput;
    }
    err << kName << "metrics at http://" << host << ":" << *bound
        << "/metrics\n";
  }
  CanaryController controller(state, rollout, &environment);
  auto run = controller.Run(
      {canary_id, service_name, candidate_version, stable_version});
  if (!run.ok()) {
    if (absl::IsCancelled(run.status())) {
      err << kName << run.status().message() << "\n";
      return kExitResumable;
    }
    err << kName << run.status().message() << "\n";
    return command::ExitCodeOf(run.status());
  }
  return finish(*run);
}

void AddCanaryRunCommand(CLI::App& canary, int& exit_code) {
  auto run = command::AddSubcommand<CanaryRunFlags>(
      canary, "run",
      "Roll a candidate policy out to a service: build and check stable and "
      "candidate, start stable/baseline/canary instances with traffic, "
      "judge each step from the reward engine's windows, roll back or "
      "promote. Resumes when run again after a stop. Exit 0 promoted, 3 "
      "rolled back, 4 refused by the error budget, 5 aborted, 75 stopped "
      "(resumable)",
      exit_code, [](const CanaryRunFlags& flags) {
        return RunCanaryRun(flags, std::cout, std::cerr);
      });
  CLI::App& app = *run.app;
  CanaryRunFlags& flags = *run.flags;
  app.add_option("--service", flags.service,
                 "service file (configs/services/demo.yaml)")
      ->required();
  app.add_option("--candidate", flags.candidate,
                 "the policy to roll out: a .plpolicy file (pushed to the "
                 "store's candidate channel) or a version in the store")
      ->required();
  app.add_option("--canary-id", flags.canary_id,
                 "name of this rollout (default SERVICE-VERSION12); the same "
                 "id resumes it");
  app.add_option("--stable", flags.stable,
                 "version to compare against (default: the store's stable "
                 "channel; plain -O3 when it has none)");
  app.add_option("--policy-store", flags.policy_store,
                 "policy store address HOST:PORT (default "
                 "$PHASELOOP_POLICY_STORE, else a store served from "
                 "--policy-dir)");
  app.add_option("--policy-dir", flags.policy_dir,
                 "policy store directory served for this run (default "
                 "STATE/policies)");
  command::AddKafkaOption(app, flags.kafka);
  app.add_option("--buffer", flags.buffer,
                 "replay buffer for rewards and decisions (default "
                 "STATE/buffer.db)");
  command::AddStateDirOption(app, flags.state_dir);
  app.add_option("--cc", flags.cc,
                 "phaseloop-cc (default: beside this binary, else on PATH)");
  app.add_option("--bazel-shims", flags.bazel_shims,
                 "offline Bazel shims (default: the checkout's "
                 "third_party/bazel_shims)");
  app.add_option("--staging-lower-bound", flags.staging_lower_bound,
                 "lower end of the candidate's staging speedup interval vs "
                 "stable (the error budget policy may ask for one)")
      // NaN is "not staged" inside; given, it passed the staging gate.
      ->check(command::PositiveNumber());
  app.add_option("--inject-canary-slowdown", flags.inject_canary_slowdown,
                 "benchmarks: make the canary instance this fraction slower "
                 "in CPU (canary serve --slowdown), to measure the judge")
      ->check(command::NonNegativeNumber())  // NaN passed the range
      ->check(command::NumberInRange(0.0, 10.0));
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "serve Prometheus /metrics on HOST:PORT (loopback by "
                 "default; port 0 picks a free one; \"\" serves none)")
      ->capture_default_str();
  app.add_flag("--json", flags.json, "print the run's state as JSON");
}

}  // namespace phaseloop::canary
