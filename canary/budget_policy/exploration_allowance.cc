#include "canary/budget_policy/exploration_allowance.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace phaseloop::canary {
namespace {

bool InGroups(const std::vector<std::string>& groups,
              const std::string& group) {
  return std::find(groups.begin(), groups.end(), kAnyGroup) != groups.end() ||
         std::find(groups.begin(), groups.end(), group) != groups.end();
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string Where(const v1::BudgetStatus& status) {
  return absl::StrCat(status.service(), "/", status.slo_name(), "/",
                      status.group());
}

std::string Percent(double fraction) {
  return absl::StrFormat("%.1f %%", fraction * 100);
}

std::string AlertText(const v1::BurnRateAlert& alert,
                      const v1::BudgetStatus& status) {
  return absl::StrFormat(
      "%s alert firing on %s (burn %.1fx over %s, %.1fx "
      "over %s; threshold %.1fx)",
      alert.name(), Where(status), alert.long_burn_rate(), alert.long_window(),
      alert.short_burn_rate(), alert.short_window(), alert.threshold());
}

ExplorationAllowance Frozen(ExplorationAllowance allowance,
                            const std::string& why) {
  allowance.allowed = false;
  allowance.tier = kFrozenTier;
  allowance.max_canary_weight = 0;
  allowance.steps.clear();
  allowance.max_concurrent = 0;
  allowance.min_candidate_lower_bound.reset();
  allowance.reasons.push_back(
      absl::StrCat(why, ": no exploration, only stable ships"));
  return allowance;
}

}  // namespace

ExplorationAllowance ComputeExplorationAllowance(
    const BudgetPolicy& policy, const ExplorationRequest& request) {
  ExplorationAllowance allowance;
  // 1. Alerts.
  const v1::BudgetStatus* worst = nullptr;
  std::string page, ticket, unreadable;
  for (const v1::BudgetStatus& status : request.budgets) {
    if (status.service() != request.service) continue;
    if (InGroups(policy.alert_groups, status.group())) {
      for (const v1::BurnRateAlert& alert : status.alerts()) {
        if (!alert.firing()) continue;
        allowance.firing_alerts.push_back(
            absl::StrCat(alert.name(), " on ", Where(status)));
        if (page.empty() && Contains(policy.page_alerts, alert.name())) {
          page = AlertText(alert, status);
        }
        if (ticket.empty() && Contains(policy.ticket_alerts, alert.name())) {
          ticket = AlertText(alert, status);
        }
      }
    }
    // 2. The budget: the lowest remaining that saw events. A status whose
    // remaining budget is not a number (the topic is outside input) compares
    // false with everything and would hide the lowest: it freezes instead.
    if (InGroups(policy.budget_groups, status.group()) && status.total() > 0) {
      if (!std::isfinite(status.error_budget_remaining())) {
        if (unreadable.empty()) unreadable = Where(status);
      } else if (worst == nullptr || status.error_budget_remaining() <
                                         worst->error_budget_remaining()) {
        worst = &status;
      }
    }
  }
  if (!unreadable.empty()) {
    return Frozen(std::move(allowance),
                  absl::StrCat("the budget status of ", unreadable,
                               " has no finite error_budget_remaining (a "
                               "damaged or foreign record on the budget "
                               "topic): no exploration until it is valid"));
  }
  if (worst != nullptr) {
    allowance.budget_remaining = worst->error_budget_remaining();
    allowance.budget_source = Where(*worst);
  }
  if (!page.empty())
    return Frozen(std::move(allowance), absl::StrCat(page, ", a fast burn"));

  int tier = 0;
  if (worst == nullptr) {
    // Groups are free text (sli send), so an unknown name in budget_groups
    // cannot be refused; the groups that do have statuses are named, so a
    // typo ([baselin]) shows.
    std::set<std::string> seen;
    for (const v1::BudgetStatus& status : request.budgets) {
      if (status.service() == request.service && status.total() > 0) {
        seen.insert(status.group());
      }
    }
    std::string missing = absl::StrCat(
        "no budget status with events for service ", request.service,
        " in groups ", absl::StrJoin(policy.budget_groups, ","),
        " (the reward engine publishes one per SLO and group as windows "
        "close)");
    if (!seen.empty()) {
      absl::StrAppend(&missing, "; it has statuses in groups ",
                      absl::StrJoin(seen, ","),
                      ": is budget_groups spelled as those?");
    }
    if (policy.no_budget_data == NoBudgetData::kRefuse) {
      return Frozen(std::move(allowance),
                    absl::StrCat(missing, "; no_budget_data: refuse"));
    }
    tier = static_cast<int>(policy.tiers.size()) - 1;
    allowance.reasons.push_back(absl::StrCat(
        missing, "; no_budget_data: conservative → the last tier, ",
        policy.tiers[tier].name));
  } else {
    const double remaining = worst->error_budget_remaining();
    if (worst->budget_exhausted() || remaining <= 0) {
      return Frozen(std::move(allowance),
                    absl::StrCat("error budget exhausted on ", Where(*worst),
                                 " (", Percent(remaining), " left)"));
    }
    // 3. The tier.
    while (tier < static_cast<int>(policy.tiers.size()) &&
           remaining < policy.tiers[tier].min_budget_remaining) {
      ++tier;
    }
    if (tier == static_cast<int>(policy.tiers.size())) {
      return Frozen(
          std::move(allowance),
          absl::StrCat(Percent(remaining), " of the error budget left on ",
                       Where(*worst), ", below the last tier's ",
                       Percent(policy.tiers.back().min_budget_remaining)));
    }
    allowance.reasons.push_back(
        absl::StrCat(Percent(remaining), " of the error budget left on ",
                     Where(*worst), " (the lowest counted) ≥ ",
                     Percent(policy.tiers[tier].min_budget_remaining),
                     " → tier ", policy.tiers[tier].name));
  }
  // 4. Tickets.
  if (!ticket.empty() && policy.ticket_demotes_tiers > 0) {
    tier += policy.ticket_demotes_tiers;
    if (tier >= static_cast<int>(policy.tiers.size())) {
      return Frozen(
          std::move(allowance),
          absl::StrCat(ticket, ", which takes exploration down ",
                       policy.ticket_demotes_tiers, " tier(s), past the last"));
    }
    allowance.reasons.push_back(
        absl::StrCat(ticket, " → down ", policy.ticket_demotes_tiers,
                     " tier(s) to ", policy.tiers[tier].name));
  }
  // 5. The tier's allowance.
  const ExplorationTier& chosen = policy.tiers[tier];
  allowance.tier = chosen.name;
  allowance.max_canary_weight = chosen.max_canary_weight;
  allowance.steps = chosen.steps;
  allowance.max_concurrent = chosen.max_concurrent;
  allowance.min_candidate_lower_bound = chosen.min_candidate_lower_bound;
  allowance.allowed = true;
  // 6. Concurrency.
  if (request.running_experiments >= chosen.max_concurrent) {
    allowance.allowed = false;
    allowance.reasons.push_back(absl::StrCat(
        request.running_experiments, " experiment(s) already running; tier ",
        chosen.name, " allows ", chosen.max_concurrent,
        " at once: wait for one to finish"));
  }
  // 7. Staging evidence.
  if (chosen.min_candidate_lower_bound) {
    const double needed = *chosen.min_candidate_lower_bound;
    if (!request.candidate_lower_bound) {
      allowance.allowed = false;
      allowance.reasons.push_back(absl::StrFormat(
          "tier %s asks the candidate's staging speedup lower bound to reach "
          "%.3f and the candidate has no staging evidence: stage it first "
          "(phaseloop stage)",
          chosen.name, needed));
    } else if (*request.candidate_lower_bound < needed) {
      allowance.allowed = false;
      allowance.reasons.push_back(absl::StrFormat(
          "the candidate's staging speedup lower bound %.3f is below tier "
          "%s's %.3f",
          *request.candidate_lower_bound, chosen.name, needed));
    } else {
      allowance.reasons.push_back(absl::StrFormat(
          "the candidate's staging speedup lower bound %.3f reaches tier %s's "
          "%.3f",
          *request.candidate_lower_bound, chosen.name, needed));
    }
  }
  if (!allowance.allowed) {
    allowance.max_canary_weight = 0;
    allowance.steps.clear();
  } else {
    allowance.reasons.push_back(absl::StrCat(
        "allowed: up to ", Percent(chosen.max_canary_weight), " of traffic, ",
        chosen.max_concurrent, " experiment(s) at once"));
  }
  return allowance;
}

std::vector<double> ClipSteps(const std::vector<double>& requested,
                              const ExplorationAllowance& allowance) {
  std::vector<double> steps;
  if (!allowance.allowed) return steps;
  bool clipped = false;
  for (double step : requested) {
    if (step <= allowance.max_canary_weight) {
      steps.push_back(step);
    } else {
      clipped = true;
    }
  }
  if (clipped &&
      (steps.empty() || steps.back() < allowance.max_canary_weight)) {
    steps.push_back(allowance.max_canary_weight);
  }
  return steps;
}

}  // namespace phaseloop::canary
