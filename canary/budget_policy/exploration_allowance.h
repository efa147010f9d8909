#ifndef PHASELOOP_CANARY_BUDGET_POLICY_EXPLORATION_ALLOWANCE_H_
#define PHASELOOP_CANARY_BUDGET_POLICY_EXPLORATION_ALLOWANCE_H_

// How much exploration a candidate may spend now: a pure function of the
// error budget policy (budget_policy_config.h), the latest BudgetStatus
// records on phaseloop.budget, the candidate's staging evidence and the
// experiments already running. No I/O, no clock; same inputs, same answer.
//
// The rule, in order (every step adds a reason):
//  1. Alerts: a page alert (policy.page_alerts) firing in any of the
//     service's statuses in alert_groups → frozen.
//  2. Budget: the lowest error_budget_remaining over the service's statuses
//     in budget_groups that saw events (total > 0), across SLOs. Exhausted
//     (budget_exhausted or <= 0) → frozen. None → no_budget_data:
//     conservative = the last tier, refuse = frozen.
//  3. Tier: the first tier whose min_budget_remaining the budget reaches;
//     below them all → frozen.
//  4. Tickets: any ticket alert firing in alert_groups → down
//     ticket_demotes_tiers tiers (past the last → frozen).
//  5. Frozen → not allowed: weight 0, no steps, only stable ships.
//  6. running_experiments >= the tier's max_concurrent → not allowed.
//  7. The tier asks staging evidence (min_candidate_lower_bound): absent or
//     below it → not allowed.

#include <optional>
#include <string>
#include <vector>

#include "canary/budget_policy/budget_policy_config.h"
#include "phaseloop/v1/slo.pb.h"

namespace phaseloop::canary {

struct ExplorationRequest {
  std::string service;
  // Latest status per (service, SLO, group) (slo::ReadLatestBudgets);
  // other services' records are ignored.
  std::vector<v1::BudgetStatus> budgets;
  // Lower bound of the candidate's staging speedup interval vs stable
  // (> 1 faster); unset when it was not staged.
  std::optional<double> candidate_lower_bound;
  // Canaries already running for this service (not counting this one).
  int running_experiments = 0;
};

struct ExplorationAllowance {
  bool allowed = false;
  double max_canary_weight = 0;  // 0 when not allowed
  std::vector<double> steps;     // the tier's steps; empty when not allowed
  int max_concurrent = 0;        // the tier's; 0 when frozen
  std::string tier;              // a tier name or kFrozenTier
  // Why, one sentence each, in the order of the rule above.
  std::vector<std::string> reasons;
  // The budget that counted and where it came from ("service/slo/group");
  // unset when no status counted.
  std::optional<double> budget_remaining;
  std::string budget_source;
  std::vector<std::string> firing_alerts;  // "name on service/slo/group"
  // The candidate lower bound the tier asks (unset: none or frozen).
  std::optional<double> min_candidate_lower_bound;
};

ExplorationAllowance ComputeExplorationAllowance(
    const BudgetPolicy& policy, const ExplorationRequest& request);

// `requested` traffic steps (e.g. a service's 5/25/50 %) cut to what
// `allowance` allows: steps above max_canary_weight are dropped and, when
// any was, max_canary_weight itself becomes the last step. Empty when not
// allowed.
std::vector<double> ClipSteps(const std::vector<double>& requested,
                              const ExplorationAllowance& allowance);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_BUDGET_POLICY_EXPLORATION_ALLOWANCE_H_
