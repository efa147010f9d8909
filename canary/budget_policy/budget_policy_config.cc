#include "canary/budget_policy/budget_policy_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_keys.h"

namespace phaseloop::canary {
namespace {

constexpr char kSeeFile[] = "see configs/error_budget_policy.yaml";
// The alert names the reward engine publishes (proto/phaseloop/v1/slo.proto).
const std::set<std::string>& KnownAlerts() {
  static const auto* alerts =
      new std::set<std::string>{"page", "ticket-fast", "ticket-slow"};
  return *alerts;
}

absl::Status Bad(const std::string& source, const std::string& field,
                 const std::string& problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", field, ": ", problem, " (", kSeeFile, ")"));
}

absl::Status CheckKeys(const std::string& source, const std::string& field,
                       const YAML::Node& node,
                       const std::set<std::string>& allowed) {
  for (const auto& entry : node) {
    const std::string key = config::MappingKeyText(entry.first);
    if (allowed.count(key)) continue;
    return Bad(source, field.empty() ? key : absl::StrCat(field, ".", key),
               absl::StrCat("unknown field; expected one of: ",
                            absl::StrJoin(allowed, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> Number(const std::string& source,
                              const std::string& field,
                              const YAML::Node& node) {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) ||
      !std::isfinite(value)) {
    return Bad(
        source, field,
        absl::StrCat("expected a number, got \"",
                     node.IsScalar() ? node.Scalar() : "a collection", "\""));
  }
  return value;
}

// A number in (lo, hi] (lo exclusive, hi inclusive), or in (lo, hi) when
// !hi_inclusive.
absl::StatusOr<double> Fraction(const std::string& source,
                                const std::string& field,
                                const YAML::Node& node, double lo, double hi,
                                bool hi_inclusive) {
  auto value = Number(source, field, node);
  if (!value.ok()) return value.status();
  if (!(*value > lo) || !(hi_inclusive ? *value <= hi : *value < hi)) {
    return Bad(source, field,
               absl::StrCat(*value, " is outside (", lo, ", ", hi,
                            hi_inclusive ? "]" : ")",
                            "; weights and budgets are fractions: 0.05 "
                            "means 5 %"));
  }
  return *value;
}

absl::StatusOr<int> WholeNumber(const std::string& source,
                                const std::string& field,
                                const YAML::Node& node, int lo) {
  int value = 0;
  if (!node.IsScalar() || !YAML::convert<int>::decode(node, value) ||
      value < lo) {
    return Bad(
        source, field,
        absl::StrCat("expected a whole number of at least ", lo, ", got \"",
                     node.IsScalar() ? node.Scalar() : "a collection", "\""));
  }
  return value;
}

absl::StatusOr<std::vector<std::string>> Names(const std::string& source,
                                               const std::string& field,
                                               const YAML::Node& node) {
  if (!node.IsSequence()) {
    return Bad(source, field, "expected a list, e.g. [a, b]");
  }
  std::vector<std::string> names;
  for (const YAML::Node& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return Bad(source, field, "every entry must be a non-empty name");
    }
    names.push_back(item.Scalar());
  }
  return names;
}

absl::Status CheckAlerts(const std::string& source, const std::string& field,
                         const std::vector<std::string>& alerts) {
  for (const std::string& alert : alerts) {
    if (KnownAlerts().count(alert)) continue;
    return Bad(source, field,
               absl::StrCat("\"", alert,
                            "\" is not an alert the reward "
                            "engine publishes; use ",
                            absl::StrJoin(KnownAlerts(), ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<ExplorationTier> ReadTier(const std::string& source,
                                         const std::string& prefix,
                                         const YAML::Node& node) {
  if (!node.IsMap()) return Bad(source, prefix, "must be a mapping");
  if (auto s =
          CheckKeys(source, prefix, node,
                    {"name", "min_budget_remaining", "max_canary_weight",
                     "steps", "min_candidate_lower_bound", "max_concurrent"});
      !s.ok()) {
    return s;
  }
  for (const char* required :
       {"name", "min_budget_remaining", "max_canary_weight", "steps",
        "max_concurrent"}) {
    if (!node[required]) {
      return Bad(source, absl::StrCat(prefix, ".", required),
                 "missing; every tier names it");
    }
  }
  ExplorationTier tier;
  const YAML::Node name = node["name"];
  if (!name.IsScalar() || name.Scalar().empty()) {
    return Bad(source, prefix + ".name", "must be a non-empty name");
  }
  tier.name = name.Scalar();
  if (tier.name == kFrozenTier) {
    return Bad(source, prefix + ".name",
               "\"frozen\" is reserved for no exploration (below the last "
               "tier); pick another name");
  }
  auto budget = Fraction(source, prefix + ".min_budget_remaining",
                         node["min_budget_remaining"], 0, 1, true);
  if (!budget.ok()) return budget.status();
  tier.min_budget_remaining = *budget;
  auto weight = Fraction(source, prefix + ".max_canary_weight",
                         node["max_canary_weight"], 0, 1, false);
  if (!weight.ok()) return weight.status();
  tier.max_canary_weight = *weight;
  const YAML::Node steps = node["steps"];
  const std::string steps_field = prefix + ".steps";
  if (!steps.IsSequence() || steps.size() == 0) {
    return Bad(source, steps_field,
               "expected a non-empty list of traffic weights, e.g. [0.05, "
               "0.25, 0.5]");
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string field = absl::StrCat(steps_field, "[", i, "]");
    auto step =
        Fraction(source, field, steps[i], 0, tier.max_canary_weight, true);
    if (!step.ok()) {
      return Bad(source, field,
                 absl::StrCat("must be a weight in (0, max_canary_weight = ",
                              tier.max_canary_weight, "]"));
    }
    if (!tier.steps.empty() && *step <= tier.steps.back()) {
      return Bad(source, field,
                 absl::StrCat(*step, " does not increase on the step before (",
                              tier.steps.back(), "); list steps in order"));
    }
    tier.steps.push_back(*step);
  }
  if (const YAML::Node bound = node["min_candidate_lower_bound"];
      bound && !bound.IsNull()) {
    auto value = Number(source, prefix + ".min_candidate_lower_bound", bound);
    if (!value.ok()) return value.status();
    if (*value <= 0) {
      return Bad(source, prefix + ".min_candidate_lower_bound",
                 "must be a speedup ratio > 0 (1.0 = as fast as stable), or "
                 "null for no staging evidence");
    }
    tier.min_candidate_lower_bound = *value;
  }
  auto concurrent = WholeNumber(source, prefix + ".max_concurrent",
                                node["max_concurrent"], 1);
  if (!concurrent.ok()) return concurrent.status();
  tier.max_concurrent = *concurrent;
  return tier;
}

// Tiers go from most budget to least, names are unique, and a lower tier
// never allows more than the one above it.
absl::Status CheckTierOrder(const std::string& source,
                            const std::vector<ExplorationTier>& tiers) {
  std::set<std::string> names;
  for (size_t i = 0; i < tiers.size(); ++i) {
    const ExplorationTier& tier = tiers[i];
    const std::string prefix = absl::StrCat("tiers[", i, "]");
    if (!names.insert(tier.name).second) {
      return Bad(source, prefix + ".name",
                 absl::StrCat("\"", tier.name, "\" names two tiers"));
    }
    if (i == 0) continue;
    const ExplorationTier& above = tiers[i - 1];
    if (tier.min_budget_remaining >= above.min_budget_remaining) {
      return Bad(source, prefix + ".min_budget_remaining",
                 absl::StrCat(tier.min_budget_remaining,
                              " is not below the tier above's (",
                              above.min_budget_remaining,
                              "); list tiers from most budget to least"));
    }
    if (tier.max_canary_weight > above.max_canary_weight) {
      return Bad(source, prefix + ".max_canary_weight",
                 absl::StrCat(tier.max_canary_weight, " is above tier ",
                              above.name, "'s ", above.max_canary_weight,
                              ": less budget may not allow more traffic"));
    }
    if (tier.max_concurrent > above.max_concurrent) {
      return Bad(source, prefix + ".max_concurrent",
                 absl::StrCat(tier.max_concurrent, " is above tier ",
                              above.name, "'s ", above.max_concurrent,
                              ": less budget may not allow more experiments"));
    }
    const double needed = tier.min_candidate_lower_bound.value_or(0);
    const double needed_above = above.min_candidate_lower_bound.value_or(0);
    if (needed < needed_above) {
      return Bad(
          source, prefix + ".min_candidate_lower_bound",
          absl::StrCat(tier.min_candidate_lower_bound ? absl::StrCat(needed)
                                                      : std::string("null"),
                       " asks less than tier ", above.name, "'s ", needed_above,
                       ": less budget may not accept weaker evidence"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<ExplorationTier> BudgetPolicy::DefaultTiers() {
  return {
      {"healthy", 0.50, 0.50, {0.05, 0.25, 0.50}, 0.98, 2},
      {"cautious", 0.20, 0.10, {0.05, 0.10}, 0.98, 1},
  };
}

std::string NoBudgetDataName(NoBudgetData rule) {
  return rule == NoBudgetData::kRefuse ? "refuse" : "conservative";
}

absl::StatusOr<BudgetPolicy> ParseBudgetPolicyYaml(const std::string& text,
                                                   const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not valid YAML: ", e.what()));
  }
  BudgetPolicy policy;
  policy.source = source;
  if (!root || root.IsNull()) return policy;  // an empty file: the defaults
  if (!root.IsMap()) return Bad(source, "(top level)", "must be a mapping");
  if (auto s = CheckKeys(
          source, "", root,
          {"budget_groups", "alert_groups", "page_alerts", "ticket_alerts",
           "ticket_demotes_tiers", "no_budget_data", "tiers"});
      !s.ok()) {
    return s;
  }
  for (auto [key, out] : {std::pair{"budget_groups", &policy.budget_groups},
                          std::pair{"alert_groups", &policy.alert_groups},
                          std::pair{"page_alerts", &policy.page_alerts},
                          std::pair{"ticket_alerts", &policy.ticket_alerts}}) {
    const YAML::Node node = root[key];
    if (!node) continue;
    auto names = Names(source, key, node);
    if (!names.ok()) return names.status();
    *out = std::move(*names);
  }
  if (policy.budget_groups.empty()) {
    return Bad(source, "budget_groups",
               "is empty, so no budget would ever count; name the groups "
               "(e.g. [baseline, stable]) or \"*\" for every group");
  }
  if (auto s = CheckAlerts(source, "page_alerts", policy.page_alerts);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckAlerts(source, "ticket_alerts", policy.ticket_alerts);
      !s.ok()) {
    return s;
  }
  for (const std::string& alert : policy.ticket_alerts) {
    for (const std::string& page : policy.page_alerts) {
      if (alert == page) {
        return Bad(source, "ticket_alerts",
                   absl::StrCat("\"", alert,
                                "\" is also in page_alerts; list it once"));
      }
    }
  }
  if (const YAML::Node n = root["ticket_demotes_tiers"]; n) {
    auto value = WholeNumber(source, "ticket_demotes_tiers", n, 0);
    if (!value.ok()) return value.status();
    policy.ticket_demotes_tiers = *value;
  }
  if (const YAML::Node n = root["no_budget_data"]; n) {
    const std::string rule = n.IsScalar() ? n.Scalar() : "";
    if (rule == "conservative") {
      policy.no_budget_data = NoBudgetData::kConservative;
    } else if (rule == "refuse") {
      policy.no_budget_data = NoBudgetData::kRefuse;
    } else {
      return Bad(source, "no_budget_data",
                 absl::StrCat("\"", rule,
                              "\" is not a rule; use conservative (the last "
                              "tier) or refuse (no exploration)"));
    }
  }
  if (const YAML::Node tiers = root["tiers"]; tiers) {
    if (!tiers.IsSequence() || tiers.size() == 0) {
      return Bad(source, "tiers",
                 "expected a non-empty list of tiers (for no exploration at "
                 "all, give one tier with min_budget_remaining: 1)");
    }
    policy.tiers.clear();
    for (size_t i = 0; i < tiers.size(); ++i) {
      auto tier = ReadTier(source, absl::StrCat("tiers[", i, "]"), tiers[i]);
      if (!tier.ok()) return tier.status();
      policy.tiers.push_back(std::move(*tier));
    }
    if (auto s = CheckTierOrder(source, policy.tiers); !s.ok()) return s;
  }
  return policy;
}

absl::StatusOr<BudgetPolicy> LoadBudgetPolicy(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read error budget policy ", path,
        "; give an existing file (e.g. configs/error_budget_policy.yaml)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseBudgetPolicyYaml(text.str(), path);
}

}  // namespace phaseloop::canary
