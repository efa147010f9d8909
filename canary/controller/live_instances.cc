// LiveEnvironment's processes and traffic: the reward engine and the three
// service instances as background processes, the load generator in
// process.
#include <chrono>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "canary/controller/live_environment.h"
#include "common/files/atomic_file.h"
#include "common/process/background_process.h"

namespace phaseloop::canary {

// The run's state directory for every child: the instances' delivery
// spools and the reward engine's lost-records log live there, also when it
// came from --state-dir rather than the environment.
std::vector<std::string> LiveEnvironment::ChildEnvironment() const {
  if (options_.state_dir.empty()) return {};
  return {absl::StrCat("PHASELOOP_STATE_DIR=", options_.state_dir)};
}
namespace {

constexpr int64_t kAddressWaitMs = 60000;

std::string Tail(const std::string& path, size_t bytes = 1500) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

process::BackgroundProcess AsProcess(const v1::CanaryInstance& instance) {
  return {instance.pid(), instance.start_ticks()};
}

}  // namespace

absl::Status LiveEnvironment::StartServe(v1::CanaryRun* run,
                                         const std::string& group,
                                         const std::string& handler,
                                         const std::string& deployment_id,
                                         const std::string& policy_version) {
  const std::string address_file =
      absl::StrCat(options_.run_dir, "/", group, ".address");
  const std::string log = absl::StrCat(options_.run_dir, "/", group, ".log");
  std::remove(address_file.c_str());
  const ServiceConfig& service = options_.service;
  std::vector<std::string> argv = {
      options_.phaseloop_binary,
      "canary",
      "serve",
      "--handler",
      handler,
      "--listen",
      "127.0.0.1:0",
      "--address-file",
      address_file,
      "--service",
      service.service,
      "--group",
      group,
      "--deployment-id",
      deployment_id,
      "--policy-version",
      policy_version.empty() ? "baseline" : policy_version,
      "--window-ms",
      absl::StrCat(service.sli_window_ms),
      "--kafka",
      options_.kafka,
      "--threads",
      absl::StrCat(service.instance_threads),
      "--instance",
      absl::StrCat(run->canary_id(), "-", group)};
  if (group == "canary" && options_.canary_slowdown > 0) {
    argv.insert(argv.end(),
                {"--slowdown", absl::StrCat(options_.canary_slowdown)});
  }
  auto started = process::StartBackground({argv, ChildEnvironment(), log});
  if (!started.ok()) return started.status();
  v1::CanaryInstance* instance = run->add_instances();
  instance->set_group(group);
  instance->set_pid(started->pid);
  instance->set_start_ticks(started->start_ticks);
  instance->set_policy_version(policy_version);
  instance->set_deployment_id(deployment_id);
  auto address = process::WaitForAddressFile(*started, address_file,
                                             kAddressWaitMs, stop_flag_);
  if (absl::IsFailedPrecondition(address.status())) {
    return absl::InternalError(absl::StrCat("the ", group,
                                            " instance exited at start; "
                                            "its log ",
                                            log, " ends:\n", Tail(log)));
  }
  if (!address.ok()) {
    return absl::DeadlineExceededError(
        absl::StrCat("the ", group, " instance wrote no address to ",
                     address_file, " within ", kAddressWaitMs / 1000,
                     " s; its log ", log, " ends:\n", Tail(log)));
  }
  instance->set_address(*address);
  return absl::OkStatus();
}

absl::Status LiveEnvironment::StartInstances(v1::CanaryRun* run) {
  const ServiceConfig& service = options_.service;
  // The reward engine first: its own consumer group, reading this run's
  // SLI windows.
  const std::string engine_log = options_.run_dir + "/rewards.log";
  auto engine = process::StartBackground(
      {{options_.phaseloop_binary, "rewards", "run", "--kafka", options_.kafka,
        "--buffer", options_.buffer_path, "--slo-dir", service.slo_dir,
        "--window-ms", absl::StrCat(service.reward_window_ms), "--lateness-ms",
        absl::StrCat(service.reward_lateness_ms), "--close-idle-ms",
        absl::StrCat(service.reward_close_idle_ms), "--idle-ms",
        absl::StrCat(service.reward_idle_ms), "--group",
        absl::StrCat("phaseloop-canary-", run->canary_id())},
       ChildEnvironment(),
       engine_log});
  if (!engine.ok()) return engine.status();
  v1::CanaryInstance* rewards = run->add_instances();
  rewards->set_group("rewards");
  rewards->set_pid(engine->pid);
  rewards->set_start_ticks(engine->start_ticks);

  if (auto s = StartServe(run, "stable", StableHandlerPath(),
                          run->stable_deployment_id(), run->stable_version());
      !s.ok()) {
    return s;
  }
  if (auto s = StartServe(run, "baseline", StableHandlerPath(),
                          run->baseline_deployment_id(), run->stable_version());
      !s.ok()) {
    return s;
  }
  if (auto s =
          StartServe(run, "canary", CandidateHandlerPath(),
                     run->canary_deployment_id(), run->candidate_version());
      !s.ok()) {
    return s;
  }
  std::vector<load::Target> targets;
  for (const auto& instance : run->instances()) {
    if (instance.group() == "rewards") continue;
    const size_t colon = instance.address().rfind(':');
    load::Target target;
    target.name = instance.group();
    target.host = instance.address().substr(0, colon);
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(instance.address().substr(colon + 1), &target.port)) {
      return absl::InternalError(
          absl::StrCat("the ", instance.group(), " instance's address '",
                       instance.address(), "' is not HOST:PORT"));
    }
    target.weight = instance.group() == "stable" ? 1 : 0;
    targets.push_back(target);
  }
  auto target_set = load::TargetSet::Create(targets);
  if (!target_set.ok()) return target_set.status();
  load::LoadSpec spec = service.load;
  // The load runs until the controller stops it.
  spec.duration_s = 7 * 24 * 3600;
  spec.max_requests = 0;
  auto load = load::OpenLoopLoad::Start(spec, *target_set);
  if (!load.ok()) return load.status();
  load_ = *std::move(load);
  return absl::OkStatus();
}

absl::Status LiveEnvironment::StopInstances(const v1::CanaryRun& run) {
  if (load_ != nullptr) {
    load_->Stop();
    load_->Wait();
    load_.reset();
  }
  absl::Status first_error;
  // Services first (their last windows reach Kafka), the engine last.
  for (const bool engine : {false, true}) {
    for (const auto& instance : run.instances()) {
      if ((instance.group() == "rewards") != engine) continue;
      if (auto s = process::StopBackground(AsProcess(instance)); !s.ok()) {
        if (first_error.ok()) first_error = s;
      }
    }
  }
  return first_error;
}

std::vector<std::string> LiveEnvironment::EndedInstances(
    const v1::CanaryRun& run) {
  std::vector<std::string> ended;
  for (const auto& instance : run.instances()) {
    if (!process::IsRunning(AsProcess(instance))) {
      ended.push_back(instance.group());
    }
  }
  return ended;
}

absl::Status LiveEnvironment::SetCanaryWeight(double weight) {
  if (load_ == nullptr) {
    return weight == 0 ? absl::OkStatus()
                       : absl::FailedPreconditionError(
                             "no traffic is running (instances not started)");
  }
  return load_->SetWeights(
      {{"stable", 1 - 2 * weight}, {"baseline", weight}, {"canary", weight}});
}

}  // namespace phaseloop::canary
