#ifndef PHASELOOP_CANARY_JUDGE_JUDGE_COMMAND_H_
#define PHASELOOP_CANARY_JUDGE_JUDGE_COMMAND_H_

// `phaseloop canary judge [--listen HOST:PORT] [--config FILE]
//  [--address-file FILE]`: serves the canary judge over HTTP/JSON
// (judge_http_server.h) until SIGINT/SIGTERM. Binds loopback by default;
// prints the bound HOST:PORT on stdout (port 0 picks a free one). Without
// --config it judges by the built-in defaults (configs/canary/judge.yaml).
//
// Exit codes: 0 stopped by a signal, 2 bad input (flags, config, address
// in use).

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::canary {

// Adds `judge` to the `canary` group (canary/canary_command.h).
void AddJudgeCommand(CLI::App& canary, int& exit_code);

struct JudgeServeFlags {
  std::string listen = "127.0.0.1:9471";
  std::string config;        // "" = built-in defaults
  std::string address_file;  // "" = none
};

int RunJudgeServe(const JudgeServeFlags& flags, std::ostream& out,
                  std::ostream& err);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_JUDGE_JUDGE_COMMAND_H_
