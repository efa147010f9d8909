#include "tools/loop/loop_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "common/files/file_lock.h"
#include "common/kafka/kafka_serve_process.h"
#include "common/kafka/state_dir.h"
#include "common/process/background_process.h"
#include "common/process/self_executable.h"
#include "common/protobuf/utf8_text.h"
#include "offline_rl/learner/train_launcher.h"
#include "offline_rl/policy_store/policy_server_process.h"
#include "offline_rl/policy_store/policy_store_client.h"
#include "tools/loop/child_stage_executor.h"
#include "tools/loop/loop_config.h"
#include "tools/loop/loop_runner.h"
#include "tools/loop/loop_state.h"

namespace phaseloop::loop {
namespace {

namespace fs = std::filesystem;

constexpr char kName[] = "phaseloop loop: ";
constexpr char kPolicyStoreEnv[] = "PHASELOOP_POLICY_STORE";

// phaseloop-cc: --cc, else beside this binary, else where Bazel puts it
// beside bazel-bin/tools, else on PATH.
std::string FindWrapper(const std::string& flag, const std::string& self) {
  if (!flag.empty()) return fs::absolute(flag).string();
  const std::string beside =
      process::PhaseloopCcBeside(fs::path(self).parent_path().string());
  return beside.empty() ? "phaseloop-cc" : beside;
}

// Background helpers live as long as the loop.
struct Helpers {
  std::vector<process::BackgroundProcess> started;
  ~Helpers() {
    for (auto it = started.rbegin(); it != started.rend(); ++it) {
      (void)process::StopBackground(*it);
    }
  }
};

}  // namespace

int RunLoop(const LoopFlags& flags, std::ostream& out, std::ostream& err) {
  const std::atomic<bool>* stop = command::StopFlagOnSignals();
  auto config = LoadLoopConfig(flags.config);
  if (!config.ok()) {
    err << kName << config.status().message() << "\n";
    return command::kExitBadInput;
  }
  // What the train stage's publish gate would refuse, before explore runs.
  if (absl::Status gate = CheckGateWorkloads(*config, flags.config);
      !gate.ok()) {
    err << kName << gate.message() << "\n";
    return command::kExitBadInput;
  }
  if (!config->gate_timed) {
    err << kName << "warning: " << flags.config
        << " sets gate.timed: false; the publish gate checks outputs only "
           "and will publish a policy that is slower than -O3 (a smoke-run "
           "setting: a loop that serves users times its gate)\n";
  }
  LoopSetup setup;
  setup.iterations =
      flags.iterations > 0 ? flags.iterations : config->iterations;
  setup.loop_id = flags.loop_id.empty() ? fs::path(flags.config).stem().string()
                                        : flags.loop_id;
  if (auto s = CheckLoopId(setup.loop_id); !s.ok()) {
    err << kName << "--loop-id: " << s.message() << "\n";
    return command::kExitBadInput;
  }
  setup.state_dir =
      flags.state_dir.empty() ? kafka::DefaultStateDir() : flags.state_dir;
  if (setup.state_dir.empty()) {
    err << kName
        << "no state directory: pass --state-dir DIR or set "
           "PHASELOOP_STATE_DIR\n";
    return command::kExitBadInput;
  }
  setup.state_dir = fs::absolute(setup.state_dir).string();
  // The loop's state file (JSON) keeps these paths, or the stages it runs
  // are given them: one that is not UTF-8 would be saved altered, and the
  // resumed loop would open another file. (The buffer is checked once
  // resolved, below, still before any helper starts.)
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string*>{"--config", &flags.config},
        {"--state-dir", &setup.state_dir},
        {"--policy-store", &flags.policy_store},
        {"--policy-dir", &flags.policy_dir},
        {"--cc", &flags.cc}}) {
    if (!protobuf::IsValidUtf8(*value)) {
      err << kName << flag << " " << protobuf::ValidUtf8(*value)
          << ": not UTF-8 text, which the loop's state file cannot keep: "
             "give a path whose names are UTF-8\n";
      return command::kExitBadInput;
    }
  }
  // Every stage's command, and whatever it starts, keeps its state here
  // (delivery spools, lost-records logs), not in the caller's environment's.
  setenv("PHASELOOP_STATE_DIR", setup.state_dir.c_str(), 1);
  const LoopStateStore store(setup.state_dir);
  const std::string helper_dir = store.LoopDir(setup.loop_id) + "/helpers";
  if (auto s = files::MakeDirectories(helper_dir); !s.ok()) {
    err << kName << "cannot create the state directory " << setup.state_dir
        << ": " << s.message() << "\n";
    return command::kExitBadInput;
  }
  auto lock = files::FileLock::Acquire(
      store.LoopDir(setup.loop_id) + "/loop.lock", 0, stop);
  if (!lock.ok()) {
    err << kName << "loop " << setup.loop_id
        << " is being run by another phaseloop loop ("
        << lock.status().message()
        << "); let it finish or stop it (Ctrl-C), or pick another --loop-id\n";
    return command::kExitBadInput;
  }
  // A loop that ran before keeps its buffer, its policy directory and the
  // iterations it planned: resumed with other ones, it would train from
  // another buffer than its earlier iterations filled.
  auto existing = store.Load(setup.loop_id);
  if (!existing.ok() && !absl::IsNotFound(existing.status())) {
    err << kName << existing.status().message() << "\n";
    return command::kExitBadInput;
  }
  const v1::LoopRun* before = existing.ok() ? &*existing : nullptr;
  // A new loop's train stage needs the learner: said before explore spends
  // its budget (a resumed loop may be past its training).
  if (before == nullptr && offline_rl::FindTrainBinary().empty()) {
    err << kName
        << "cannot find phaseloop-train beside this phaseloop binary (or "
           "$PHASELOOP_TRAIN_BINARY), which the train stage runs: build "
           "//offline_rl/learner:phaseloop-train and install it next to "
           "phaseloop\n";
    return command::kExitInternal;
  }
  if (before != nullptr && flags.iterations > 0 &&
      flags.iterations < before->iterations_planned()) {
    err << kName << "--iterations " << flags.iterations << ": loop "
        << setup.loop_id << " planned " << before->iterations_planned()
        << " iterations already (a loop does not shrink); pass "
        << before->iterations_planned()
        << " or more, or start another loop with --loop-id\n";
    return command::kExitBadInput;
  }
  setup.phaseloop = process::SelfExecutable();
  setup.cc = FindWrapper(flags.cc, setup.phaseloop);
  setup.buffer =
      fs::weakly_canonical(fs::absolute(flags.buffer.empty()
                                            ? setup.state_dir + "/buffer.db"
                                            : flags.buffer))
          .string();
  // Kept resolved: a link with a UTF-8 name to a directory whose name is
  // not was refused only after the helpers had started.
  if (!protobuf::IsValidUtf8(setup.buffer)) {
    err << kName << "the replay buffer " << protobuf::ValidUtf8(setup.buffer)
        << " (its resolved path) is not UTF-8 text, which the loop's state "
           "file cannot keep: give a buffer whose path names are UTF-8\n";
    return command::kExitBadInput;
  }
  if (before != nullptr && !before->buffer_path().empty() &&
      setup.buffer != fs::weakly_canonical(before->buffer_path()).string()) {
    if (!flags.buffer.empty()) {
      err << kName << "--buffer " << setup.buffer << ": loop " << setup.loop_id
          << " keeps its replay buffer at " << before->buffer_path()
          << " (its earlier iterations' data); pass that, or start another "
             "loop with --loop-id\n";
      return command::kExitBadInput;
    }
    setup.buffer = before->buffer_path();
  }

  if (!flags.policy_store.empty() && !flags.policy_dir.empty()) {
    err << kName
        << "give --policy-store (a store that runs) or --policy-dir (one the "
           "loop serves), not both\n";
    return command::kExitBadInput;
  }
  Helpers helpers;
  setup.kafka = flags.kafka;
  if (setup.kafka.empty()) {
    if (const char* env = std::getenv(command::kKafkaEnv)) setup.kafka = env;
  }
  if (setup.kafka.empty()) {
    process::BackgroundProcess cluster;
    auto address = kafka::StartKafkaServe(setup.phaseloop,
                                          helper_dir + "/kafka", &cluster);
    if (!address.ok()) {
      err << kName << "cannot start the embedded Kafka cluster: "
          << address.status().message() << "\n";
      return command::kExitInternal;
    }
    helpers.started.push_back(cluster);
    setup.kafka = *address;
    err << kName << "embedded Kafka cluster at " << setup.kafka << "\n";
  }
  setup.policy_store = flags.policy_store;
  if (setup.policy_store.empty() && flags.policy_dir.empty()) {
    if (const char* env = std::getenv(kPolicyStoreEnv)) {
      setup.policy_store = env;
    }
  }
  // A resumed loop keeps its policy store: the one it was given, or the
  // directory it served (its channels are what its iterations moved).
  if (before != nullptr && before->policy_dir().empty() &&
      !before->policy_store().empty() && setup.policy_store.empty()) {
    err << kName << "loop " << setup.loop_id
        << " keeps its policies in the store at " << before->policy_store()
        << "; pass --policy-store " << before->policy_store()
        << " (or set PHASELOOP_POLICY_STORE), or start another loop with "
           "--loop-id\n";
    return command::kExitBadInput;
  }
  if (before != nullptr && !before->policy_dir().empty() &&
      !setup.policy_store.empty()) {
    err << kName << "loop " << setup.loop_id << " serves its policies from "
        << before->policy_dir() << "; drop --policy-store (and "
        << kPolicyStoreEnv
        << ") to resume it, or start another loop with --loop-id\n";
    return command::kExitBadInput;
  }
  // A store given is asked before any stage runs: a mistyped address was
  // found only at the first publish, after explore had spent its budget,
  // and was saved in the loop's state.
  if (!setup.policy_store.empty()) {
    absl::Status answered;
    auto client =
        policy_store::ConnectPolicyStore(setup.policy_store, absl::Seconds(15));
    if (!client.ok()) {
      answered = client.status();
    } else if (auto listed = (*client)->List(); !listed.ok()) {
      answered = listed.status();
    } else if (before != nullptr && before->policy_dir().empty() &&
               !before->policy_store().empty()) {
      // The loop's store, by this address or another, holds what the loop
      // published there (localhost for 127.0.0.1 does; a store started
      // afresh at the same address does not).
      std::vector<std::string> held;
      for (const policy_store::StoredPolicy& policy : listed->policies) {
        held.push_back(policy.policy_version);
      }
      if (absl::Status same =
              CheckResumedStore(*before, setup.policy_store, held);
          !same.ok()) {
        err << kName << "--policy-store " << setup.policy_store << ": "
            << same.message() << "\n";
        return command::kExitBadInput;
      }
      const size_t published = PublishedVersions(*before).size();
      if (setup.policy_store != before->policy_store() && published > 0) {
        err << kName << "loop " << setup.loop_id << ": the store at "
            << setup.policy_store << " holds every version it published at "
            << before->policy_store() << " (" << published
            << "): resuming with it, its address saved\n";
      }
    }
    if (!answered.ok()) {
      err << kName << "policy store " << setup.policy_store << ": "
          << answered.message()
          << "; or leave --policy-store out: the loop serves a store of its "
             "own\n";
      return command::ExitCodeOf(answered) == command::kExitInternal
                 ? command::kExitBadInput
                 : command::ExitCodeOf(answered);
    }
  }
  if (setup.policy_store.empty()) {
    setup.policy_dir =
        fs::weakly_canonical(fs::absolute(flags.policy_dir.empty()
                                              ? setup.state_dir + "/policies"
                                              : flags.policy_dir))
            .string();
    if (before != nullptr && !before->policy_dir().empty() &&
        setup.policy_dir !=
            fs::weakly_canonical(before->policy_dir()).string()) {
      if (!flags.policy_dir.empty()) {
        err << kName << "--policy-dir " << setup.policy_dir << ": loop "
            << setup.loop_id << " keeps its policies in "
            << before->policy_dir()
            << "; pass that, or start another loop with --loop-id\n";
        return command::kExitBadInput;
      }
      setup.policy_dir = before->policy_dir();
    }
    if (!protobuf::IsValidUtf8(setup.policy_dir)) {
      err << kName << "the policy directory "
          << protobuf::ValidUtf8(setup.policy_dir)
          << " (its resolved path) is not UTF-8 text, which the loop's state "
             "file cannot keep: give a directory whose path names are UTF-8\n";
      return command::kExitBadInput;
    }
    process::BackgroundProcess server;
    auto address = policy_store::ServePolicyDirectory(
        setup.phaseloop, setup.policy_dir, helper_dir + "/policy", stop,
        &server, &err);
    if (!address.ok()) {
      err << kName << "cannot serve the policy store " << setup.policy_dir
          << ": " << address.status().message() << "\n";
      // In use by another run: bad input (exit 2); a store that would not
      // start: internal.
      return absl::IsFailedPrecondition(address.status())
                 ? command::kExitBadInput
                 : command::kExitInternal;
    }
    helpers.started.push_back(server);
    setup.policy_store = *address;
    err << kName << "policy store " << setup.policy_dir << " at "
        << setup.policy_store << "\n";
  }

  ChildStageExecutor executor(stop, err, isatty(STDERR_FILENO) != 0);
  LoopRunner runner(*config, setup, &executor);
  auto run = runner.Run();
  if (!run.ok()) {
    err << kName << run.status().message() << "\n";
    return command::ExitCodeOf(run.status());
  }
  if (flags.json) {
    out << LoopRunToJson(*run);
  } else {
    out << "loop " << run->loop_id() << ": " << run->phase() << " ("
        << run->iterations_size() << " of " << run->iterations_planned()
        << " iterations)\n"
        << FormatIterations(*run);
  }
  if (run->phase() == "failed") {
    err << kName << run->failure() << "\n"
        << "fix it and run the same command again: it resumes at that "
           "stage\n";
    return command::kExitInternal;
  }
  if (run->phase() != "done") {
    err << kName << "stopped; run the same command again to resume\n";
    return kExitStopped;
  }
  err << "report: phaseloop report --loop-id " << run->loop_id()
      << " --out loop-report.html\n";
  return command::kExitOk;
}

void AddLoopCommand(CLI::App& app, int& exit_code) {
  auto loop = command::AddSubcommand<LoopFlags>(
      app, "loop",
      "The closed loop: explore (runtime search), retrain the speed policy "
      "from the replay buffer with its publish gate, publish it, stage it on "
      "the service's workload, roll it out by canary; iteration after "
      "iteration, resuming where it stopped. Exit 0 done, 1 a stage failed, "
      "2 bad input, 75 stopped (resumable)",
      exit_code, [](const LoopFlags& flags) {
        return RunLoop(flags, std::cout, std::cerr);
      });
  CLI::App& cmd = *loop.app;
  LoopFlags& flags = *loop.flags;
  cmd.add_option("--config", flags.config,
                 "loop settings (configs/loop/demo.yaml documents them)")
      ->capture_default_str();
  cmd.add_option("--iterations", flags.iterations,
                 "iterations in all (default: the config's); more than a "
                 "finished loop had continues it")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--loop-id", flags.loop_id,
                 "name of this loop (default: the config file's name); the "
                 "same id resumes it");
  command::AddStateDirOption(cmd, flags.state_dir);
  cmd.add_option("--buffer", flags.buffer,
                 "replay buffer (default STATE/buffer.db; a resumed loop "
                 "keeps the one it started with)");
  command::AddKafkaOption(cmd, flags.kafka);
  cmd.add_option("--policy-store", flags.policy_store,
                 "policy store address HOST:PORT (default "
                 "$PHASELOOP_POLICY_STORE, else a store served from "
                 "--policy-dir)");
  cmd.add_option("--policy-dir", flags.policy_dir,
                 "policy store directory served for the loop (default "
                 "STATE/policies; a resumed loop keeps its own)");
  cmd.add_option("--cc", flags.cc,
                 "phaseloop-cc (default: beside this binary, else on PATH)");
  cmd.add_flag("--json", flags.json, "print the loop's state as JSON");
}

}  // namespace phaseloop::loop
