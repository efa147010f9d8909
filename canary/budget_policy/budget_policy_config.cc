#include "canary/budget_policy/budget_policy_config.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_fields.h"

namespace phaseloop::canary {
namespace {

using config::NumberRange;
using config::YamlFields;

constexpr char kDocs[] = "configs/error_budget_policy.yaml";
// The alert names the reward engine publishes (proto/phaseloop/v1/slo.proto).
const std::set<std::string>& KnownAlerts() {
  static const auto* alerts =
      new std::set<std::string>{"page", "ticket-fast", "ticket-slow"};
  return *alerts;
}

// A traffic weight or a budget fraction in `range`, said as a fraction.
absl::StatusOr<double> Fraction(const YamlFields& fields,
                                const std::string& field,
                                const YAML::Node& node,
                                const NumberRange& range) {
  auto value = fields.NumberValue(field, node);
  if (!value.ok()) return value.status();
  if (!range.Contains(*value)) {
    return fields.Bad(field, absl::StrCat(*value, " is outside ", range.Text(),
                                          "; weights and budgets are "
                                          "fractions: 0.05 means 5 %"));
  }
  return *value;
}

absl::Status CheckAlerts(const YamlFields& fields, const std::string& field,
                         const std::vector<std::string>& alerts) {
  for (const std::string& alert : alerts) {
    if (KnownAlerts().count(alert)) continue;
    return fields.Bad(field, absl::StrCat("\"", alert,
                                          "\" is not an alert the reward "
                                          "engine publishes; use ",
                                          absl::StrJoin(KnownAlerts(), ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<ExplorationTier> ReadTier(const YamlFields& fields,
                                         const std::string& prefix,
                                         const YAML::Node& node) {
  if (auto s = fields.CheckKeys(
          prefix, node,
          {"name", "min_budget_remaining", "max_canary_weight", "steps",
           "min_candidate_lower_bound", "max_concurrent"});
      !s.ok()) {
    return s;
  }
  for (const char* required :
       {"name", "min_budget_remaining", "max_canary_weight", "steps",
        "max_concurrent"}) {
    if (!node[required]) {
      return fields.Bad(YamlFields::Field(prefix, required),
                        "missing; every tier names it");
    }
  }
  ExplorationTier tier;
  if (auto s = fields.Text(prefix, node, "name", tier.name); !s.ok()) return s;
  if (tier.name == kFrozenTier) {
    return fields.Bad(prefix + ".name",
                      "\"frozen\" is reserved for no exploration (below the "
                      "last tier); pick another name");
  }
  auto budget =
      Fraction(fields, prefix + ".min_budget_remaining",
               node["min_budget_remaining"], NumberRange::AboveUpTo(0, 1));
  if (!budget.ok()) return budget.status();
  tier.min_budget_remaining = *budget;
  auto weight = Fraction(fields, prefix + ".max_canary_weight",
                         node["max_canary_weight"], NumberRange::Between(0, 1));
  if (!weight.ok()) return weight.status();
  tier.max_canary_weight = *weight;
  const YAML::Node steps = node["steps"];
  const std::string steps_field = prefix + ".steps";
  if (!steps.IsSequence() || steps.size() == 0) {
    return fields.Bad(steps_field,
                      "expected a non-empty list of traffic weights, e.g. "
                      "[0.05, 0.25, 0.5]");
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string field = absl::StrCat(steps_field, "[", i, "]");
    auto step = fields.NumberValue(field, steps[i]);
    if (!step.ok()) return step.status();
    if (!NumberRange::AboveUpTo(0, tier.max_canary_weight).Contains(*step)) {
      return fields.Bad(field, absl::StrCat(*step,
                                            " must be a weight in (0, "
                                            "max_canary_weight = ",
                                            tier.max_canary_weight, "]"));
    }
    if (!tier.steps.empty() && *step <= tier.steps.back()) {
      return fields.Bad(
          field, absl::StrCat(*step, " does not increase on the step before (",
                              tier.steps.back(), "); list steps in order"));
    }
    tier.steps.push_back(*step);
  }
  if (const YAML::Node bound = node["min_candidate_lower_bound"];
      bound && !bound.IsNull()) {
    double value = 0;
    if (auto s = fields.Number(prefix, node, "min_candidate_lower_bound",
                               NumberRange::Above(0), value);
        !s.ok()) {
      return fields.Bad(prefix + ".min_candidate_lower_bound",
                        "must be a speedup ratio > 0 (1.0 = as fast as "
                        "stable), or null for no staging evidence");
    }
    tier.min_candidate_lower_bound = value;
  }
  if (auto s = fields.Int(prefix, node, "max_concurrent", 1,
                          YamlFields::kNoUpperEnd, tier.max_concurrent);
      !s.ok()) {
    return s;
  }
  return tier;
}

// Tiers go from most budget to least, names are unique, and a lower tier
// never allows more than the one above it.
absl::Status CheckTierOrder(const YamlFields& fields,
                            const std::vector<ExplorationTier>& tiers) {
  std::set<std::string> names;
  for (size_t i = 0; i < tiers.size(); ++i) {
    const ExplorationTier& tier = tiers[i];
    const std::string prefix = absl::StrCat("tiers[", i, "]");
    if (!names.insert(tier.name).second) {
      return fields.Bad(prefix + ".name",
                        absl::StrCat("\"", tier.name, "\" names two tiers"));
    }
    if (i == 0) continue;
    const ExplorationTier& above = tiers[i - 1];
    if (tier.min_budget_remaining >= above.min_budget_remaining) {
      return fields.Bad(
          prefix + ".min_budget_remaining",
          absl::StrCat(tier.min_budget_remaining,
                       " is not below the tier above's (",
                       above.min_budget_remaining,
                       "); list tiers from most budget to least"));
    }
    if (tier.max_canary_weight > above.max_canary_weight) {
      return fields.Bad(
          prefix + ".max_canary_weight",
          absl::StrCat(tier.max_canary_weight, " is above tier ", above.name,
                       "'s ", above.max_canary_weight,
                       ": less budget may not allow more traffic"));
    }
    if (tier.max_concurrent > above.max_concurrent) {
      return fields.Bad(
          prefix + ".max_concurrent",
          absl::StrCat(tier.max_concurrent, " is above tier ", above.name,
                       "'s ", above.max_concurrent,
                       ": less budget may not allow more experiments"));
    }
    const double needed = tier.min_candidate_lower_bound.value_or(0);
    const double needed_above = above.min_candidate_lower_bound.value_or(0);
    if (needed < needed_above) {
      return fields.Bad(
          prefix + ".min_candidate_lower_bound",
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
  const YamlFields fields(source, kDocs);
  auto root = fields.Parse(text);
  if (!root.ok()) return root.status();
  BudgetPolicy policy;
  policy.source = source;
  if (!*root || root->IsNull()) return policy;  // an empty file: the defaults
  if (auto s = fields.CheckKeys(
          "", *root,
          {"budget_groups", "alert_groups", "page_alerts", "ticket_alerts",
           "ticket_demotes_tiers", "no_budget_data", "tiers"});
      !s.ok()) {
    return s;
  }
  for (auto [key, out] : {std::pair{"budget_groups", &policy.budget_groups},
                          std::pair{"alert_groups", &policy.alert_groups},
                          std::pair{"page_alerts", &policy.page_alerts},
                          std::pair{"ticket_alerts", &policy.ticket_alerts}}) {
    if (auto s = fields.TextList("", *root, key, *out); !s.ok()) return s;
  }
  if (policy.budget_groups.empty()) {
    return fields.Bad("budget_groups",
                      "is empty, so no budget would ever count; name the "
                      "groups (e.g. [baseline, stable]) or \"*\" for every "
                      "group");
  }
  if (auto s = CheckAlerts(fields, "page_alerts", policy.page_alerts);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckAlerts(fields, "ticket_alerts", policy.ticket_alerts);
      !s.ok()) {
    return s;
  }
  for (const std::string& alert : policy.ticket_alerts) {
    for (const std::string& page : policy.page_alerts) {
      if (alert == page) {
        return fields.Bad(
            "ticket_alerts",
            absl::StrCat("\"", alert,
                         "\" is also in page_alerts; list it once"));
      }
    }
  }
  if (auto s = fields.Int("", *root, "ticket_demotes_tiers", 0,
                          YamlFields::kNoUpperEnd, policy.ticket_demotes_tiers);
      !s.ok()) {
    return s;
  }
  std::string no_data = NoBudgetDataName(policy.no_budget_data);
  if (auto s = fields.Choice(
          "", *root, "no_budget_data",
          {{"conservative", "the last tier"}, {"refuse", "no exploration"}},
          no_data);
      !s.ok()) {
    return s;
  }
  policy.no_budget_data =
      no_data == "refuse" ? NoBudgetData::kRefuse : NoBudgetData::kConservative;
  if (const YAML::Node tiers = (*root)["tiers"]; tiers) {
    if (!tiers.IsSequence() || tiers.size() == 0) {
      return fields.Bad("tiers",
                        "expected a non-empty list of tiers (for no "
                        "exploration at all, give one tier with "
                        "min_budget_remaining: 1)");
    }
    policy.tiers.clear();
    for (size_t i = 0; i < tiers.size(); ++i) {
      auto tier = ReadTier(fields, absl::StrCat("tiers[", i, "]"), tiers[i]);
      if (!tier.ok()) return tier.status();
      policy.tiers.push_back(std::move(*tier));
    }
    if (auto s = CheckTierOrder(fields, policy.tiers); !s.ok()) return s;
  }
  return policy;
}

absl::StatusOr<BudgetPolicy> LoadBudgetPolicy(const std::string& path) {
  const YamlFields fields(path, kDocs);
  auto text = fields.ReadText();
  if (!text.ok()) return text.status();
  return ParseBudgetPolicyYaml(*text, path);
}

}  // namespace phaseloop::canary
