#include "canary/judge/judge_command.h"

#include <unistd.h>

#include <iostream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "canary/judge/judge_config.h"
#include "canary/judge/judge_http_server.h"
#include "common/command/exit_code.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"

namespace phaseloop::canary {
namespace {

constexpr char kName[] = "phaseloop canary judge: ";

// "HOST:PORT" → host and port; false when it is not that.
bool SplitListen(const std::string& listen, std::string& host, int& port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = listen.substr(0, colon);
  return absl::SimpleAtoi(absl::string_view(listen).substr(colon + 1), &port) &&
         port >= 0 && port <= 65535;
}

}  // namespace

int RunJudgeServe(const JudgeServeFlags& flags, std::ostream& out,
                  std::ostream& err) {
  std::string host;
  int port = 0;
  if (!SplitListen(flags.listen, host, port)) {
    err << kName << "--listen " << flags.listen
        << ": expected HOST:PORT (e.g. 127.0.0.1:9471; port 0 picks a free "
           "one)\n";
    return command::kExitBadInput;
  }
  JudgeConfig config;
  if (!flags.config.empty()) {
    auto loaded = LoadJudgeConfig(flags.config);
    if (!loaded.ok()) {
      err << kName << "--config: " << loaded.status().message() << "\n";
      return command::ExitCodeOf(loaded.status());
    }
    config = std::move(*loaded);
  }
  // Block the stop signals before the server starts its threads (they
  // inherit the mask), so only Wait below receives them.
  command::BlockedStopSignals stop_signals;
  auto server = JudgeHttpServer::Start(std::move(config), host, port);
  if (!server.ok()) {
    err << kName << server.status().message() << "\n";
    return command::kExitBadInput;
  }
  const std::string address = absl::StrCat(host, ":", (*server)->port());
  if (!flags.address_file.empty()) {
    absl::Status written =
        files::WriteFileAtomically(flags.address_file, address + "\n");
    if (!written.ok()) {
      err << kName << "--address-file: " << written.message() << "\n";
      return command::kExitBadInput;
    }
  }
  out << address << std::endl;
  err << kName << "judging on http://" << address
      << " (POST /v1/judge, POST /v1/gate, GET /healthz) with "
      << (flags.config.empty() ? "the built-in defaults" : flags.config)
      << "; SIGINT or SIGTERM stops" << std::endl;
  const int signal_number = stop_signals.Wait();
  server->reset();
  if (!flags.address_file.empty()) unlink(flags.address_file.c_str());
  err << kName << "stopped by signal " << signal_number << "\n";
  return command::kExitOk;
}

void AddJudgeCommand(CLI::App& canary, int& exit_code) {
  auto judge = command::AddSubcommand<JudgeServeFlags>(
      canary, "judge",
      "Serve the canary judge over HTTP/JSON (Argo Rollouts web provider: "
      "POST /v1/judge; Flagger webhook: POST /v1/gate) until SIGINT/SIGTERM; "
      "prints the bound address",
      exit_code, [](const JudgeServeFlags& flags) {
        return RunJudgeServe(flags, std::cout, std::cerr);
      });
  judge.app
      ->add_option("--listen", judge.flags->listen,
                   "HOST:PORT to listen on (loopback by default; port 0 picks "
                   "a free one)")
      ->capture_default_str();
  judge.app->add_option("--config", judge.flags->config,
                        "judge rules, YAML (configs/canary/judge.yaml); "
                        "default: the built-in defaults that file documents");
  judge.app->add_option("--address-file", judge.flags->address_file,
                        "also write the bound address to FILE (atomically; "
                        "removed on a clean stop)");
}

}  // namespace phaseloop::canary
