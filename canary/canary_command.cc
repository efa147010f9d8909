#include "canary/canary_command.h"

#include "canary/budget_policy/budget_command.h"
#include "canary/controller/canary_list_command.h"
#include "canary/controller/canary_run_command.h"
#include "canary/judge/judge_command.h"
#include "canary/load/load_command.h"
#include "canary/service/serve_command.h"
#include "common/command/subcommand.h"

namespace phaseloop::canary {

void AddCanaryCommand(CLI::App& app, int& exit_code) {
  CLI::App* canary = command::AddCommandGroup(
      app, "canary",
      "Canary rollouts: roll a policy out to a service step by step, judged "
      "against a baseline within the error budget; the judge, the demo "
      "service, the load generator and the budget on their own");
  AddCanaryRunCommand(*canary, exit_code);
  AddCanaryListCommands(*canary, exit_code);
  AddJudgeCommand(*canary, exit_code);
  AddServeCommand(canary, exit_code);
  load::AddLoadCommand(canary, exit_code);
  AddBudgetCommand(canary, exit_code);
}

}  // namespace phaseloop::canary
