#ifndef PHASELOOP_CANARY_BUDGET_POLICY_BUDGET_POLICY_CONFIG_H_
#define PHASELOOP_CANARY_BUDGET_POLICY_BUDGET_POLICY_CONFIG_H_

// The error budget policy of the canary, from YAML
// (configs/error_budget_policy.yaml documents every field; its values are
// the built-in defaults below): tiers of exploration by remaining error
// budget, which groups' budgets and alerts count, what page and ticket
// alerts do, and the rule when no budget has been published.
//
// Every field is validated; unknown fields are errors; every error names
// the file and the field and says what to do.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::canary {

// One tier of exploration.
struct ExplorationTier {
  std::string name;                   // unique, not "frozen"
  double min_budget_remaining = 0.5;  // in (0, 1]
  double max_canary_weight = 0.5;     // in (0, 1)
  std::vector<double> steps;          // increasing, in (0, max_canary_weight]
  // The candidate's staging speedup lower bound must reach this; unset =
  // no staging evidence needed.
  std::optional<double> min_candidate_lower_bound;  // > 0
  int max_concurrent = 1;                           // >= 1
};

// What no budget status for the service means.
enum class NoBudgetData {
  kConservative,  // the last (most cautious) tier
  kRefuse,        // no exploration
};

// The tier name of "no exploration" (reserved).
inline constexpr char kFrozenTier[] = "frozen";
// Matches every group in budget_groups / alert_groups.
inline constexpr char kAnyGroup[] = "*";

struct BudgetPolicy {
  std::vector<std::string> budget_groups = {"baseline", "stable"};
  std::vector<std::string> alert_groups = {kAnyGroup};
  std::vector<std::string> page_alerts = {"page"};
  std::vector<std::string> ticket_alerts = {"ticket-fast", "ticket-slow"};
  int ticket_demotes_tiers = 1;  // >= 0
  NoBudgetData no_budget_data = NoBudgetData::kConservative;
  // Most budget first: min_budget_remaining strictly decreasing; a lower
  // tier allows no more weight or experiments and asks no less evidence.
  std::vector<ExplorationTier> tiers = DefaultTiers();
  std::string source;  // file it was loaded from ("" when built in)

  static std::vector<ExplorationTier> DefaultTiers();
};

std::string NoBudgetDataName(NoBudgetData rule);  // "conservative", ...

// InvalidArgument naming `source` and the field for anything invalid.
absl::StatusOr<BudgetPolicy> ParseBudgetPolicyYaml(const std::string& text,
                                                   const std::string& source);

// NotFound when the file cannot be read; otherwise as ParseBudgetPolicyYaml.
absl::StatusOr<BudgetPolicy> LoadBudgetPolicy(const std::string& path);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_BUDGET_POLICY_BUDGET_POLICY_CONFIG_H_
