#ifndef PHASELOOP_CANARY_CANARY_COMMAND_H_
#define PHASELOOP_CANARY_CANARY_COMMAND_H_

// `phaseloop canary`: every canary command, each from its room — run, list
// and report (controller/), judge (judge/), serve (service/), load
// (load/), budget (budget_policy/).

#include "CLI/CLI.hpp"

namespace phaseloop::canary {

void AddCanaryCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CANARY_COMMAND_H_
