#ifndef PHASELOOP_CANARY_BUDGET_POLICY_BUDGET_COMMAND_H_
#define PHASELOOP_CANARY_BUDGET_POLICY_BUDGET_COMMAND_H_

// `phaseloop canary budget --service NAME --kafka BOOTSTRAP
//  [--policy FILE] [--candidate-lower-bound X] [--running N] [--topic T]
//  [--timeout-ms MS] [--json]`: reads the latest error budget statuses on
// the budget topic once (no consumer group joined) and prints how much
// exploration the error budget policy allows a candidate now
// (exploration_allowance.h): the tier, the largest canary weight, the
// steps, the experiments allowed at once, the statuses that counted and a
// reason for every decision; or all of it as one JSON document.
// Without --policy it uses the built-in defaults
// (configs/error_budget_policy.yaml documents them).
//
// Exit codes: 0 the allowance was computed (allowed or not: read
// "allowed"), 1 internal failure (Kafka unreachable, timed out), 2 bad
// input (flags, policy file).

#include <iosfwd>
#include <limits>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::canary {

// Adds `budget` under the `canary` group (called by AddCanaryCommand).
void AddBudgetCommand(CLI::App* canary, int& exit_code);

struct BudgetCommandFlags {
  std::string service;
  std::string policy;  // "" = built-in defaults
  std::string kafka;
  std::string topic;  // "" = kafka::kBudgetTopic
  // NaN = the candidate has no staging evidence.
  double candidate_lower_bound = std::numeric_limits<double>::quiet_NaN();
  int running = 0;
  int timeout_ms = 10000;
  bool json = false;
};

int RunCanaryBudget(const BudgetCommandFlags& flags, std::ostream& out,
                    std::ostream& err);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_BUDGET_POLICY_BUDGET_COMMAND_H_
