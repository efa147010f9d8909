// The error budget policy's YAML: the shipped file is the built-in
// defaults, and every invalid field is refused naming the file, the field
// and the fix.
#include "canary/budget_policy/budget_policy_config.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace phaseloop::canary {
namespace {

constexpr char kShipped[] = "configs/error_budget_policy.yaml";

TEST(BudgetPolicyConfigTest, TheShippedFileIsTheBuiltInDefaults) {
  auto loaded = LoadBudgetPolicy(kShipped);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const BudgetPolicy defaults;
  EXPECT_EQ(loaded->budget_groups, defaults.budget_groups);
  EXPECT_EQ(loaded->alert_groups, defaults.alert_groups);
  EXPECT_EQ(loaded->page_alerts, defaults.page_alerts);
  EXPECT_EQ(loaded->ticket_alerts, defaults.ticket_alerts);
  EXPECT_EQ(loaded->ticket_demotes_tiers, defaults.ticket_demotes_tiers);
  EXPECT_EQ(loaded->no_budget_data, defaults.no_budget_data);
  ASSERT_EQ(loaded->tiers.size(), defaults.tiers.size());
  for (size_t i = 0; i < defaults.tiers.size(); ++i) {
    const ExplorationTier& a = loaded->tiers[i];
    const ExplorationTier& b = defaults.tiers[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.min_budget_remaining, b.min_budget_remaining);
    EXPECT_EQ(a.max_canary_weight, b.max_canary_weight);
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.min_candidate_lower_bound, b.min_candidate_lower_bound);
    EXPECT_EQ(a.max_concurrent, b.max_concurrent);
  }
  EXPECT_EQ(loaded->source, kShipped);
  // The defaults the issue asks: >= 50 % → 50 % traffic in 5/25/50, lower
  // bound 0.98, 2 experiments; 20-50 % → 10 %, 0.98, 1.
  EXPECT_EQ(defaults.tiers[0].steps, (std::vector<double>{0.05, 0.25, 0.50}));
  EXPECT_EQ(defaults.tiers[1].max_canary_weight, 0.10);
}

TEST(BudgetPolicyConfigTest, AnEmptyFileIsTheDefaultsAndFieldsOverride) {
  auto empty = ParseBudgetPolicyYaml("", "empty.yaml");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->tiers.size(), 2u);
  auto custom = ParseBudgetPolicyYaml(R"(
no_budget_data: refuse
budget_groups: ["*"]
ticket_demotes_tiers: 0
tiers:
  - {name: open, min_budget_remaining: 0.3, max_canary_weight: 0.2,
     steps: [0.01, 0.2], min_candidate_lower_bound: null, max_concurrent: 3}
)",
                                      "custom.yaml");
  ASSERT_TRUE(custom.ok()) << custom.status();
  EXPECT_EQ(custom->no_budget_data, NoBudgetData::kRefuse);
  EXPECT_EQ(custom->budget_groups, std::vector<std::string>{"*"});
  EXPECT_EQ(custom->ticket_demotes_tiers, 0);
  ASSERT_EQ(custom->tiers.size(), 1u);
  EXPECT_FALSE(custom->tiers[0].min_candidate_lower_bound.has_value());
  EXPECT_EQ(custom->tiers[0].max_concurrent, 3);
}

struct BadCase {
  const char* yaml;
  const char* field;  // the error must name it
  const char* hint;   // and say this
};

TEST(BudgetPolicyConfigTest, EveryInvalidFieldIsNamedWithTheFix) {
  const BadCase cases[] = {
      {"tiers: [", "not valid YAML", "not valid YAML"},
      {"[1, 2]", "(top)", "mapping"},
      {"exploration: on", "exploration", "unknown field"},
      {"budget_groups: baseline", "budget_groups", "a list"},
      {"budget_groups: []", "budget_groups", "\"*\""},
      {"page_alerts: [pager]", "page_alerts", "ticket-fast"},
      {"ticket_alerts: [page]", "ticket_alerts", "also in page_alerts"},
      {"ticket_demotes_tiers: -1", "ticket_demotes_tiers", "at least 0"},
      {"no_budget_data: allow", "no_budget_data", "conservative"},
      {"tiers: []", "tiers", "non-empty"},
      {"tiers: [{name: t}]", "tiers[0].min_budget_remaining", "missing"},
      {"tiers: [{name: frozen, min_budget_remaining: 0.5, max_canary_weight: "
       "0.5, steps: [0.5], max_concurrent: 1}]",
       "tiers[0].name", "reserved"},
      {"tiers: [{name: t, min_budget_remaining: 0, max_canary_weight: 0.5, "
       "steps: [0.5], max_concurrent: 1}]",
       "tiers[0].min_budget_remaining", "(0, 1]"},
      {"tiers: [{name: t, min_budget_remaining: 0.5, max_canary_weight: 50, "
       "steps: [0.5], max_concurrent: 1}]",
       "tiers[0].max_canary_weight", "0.05 means 5 %"},
      {"tiers: [{name: t, min_budget_remaining: 0.5, max_canary_weight: 0.5, "
       "steps: [0.05, 0.6], max_concurrent: 1}]",
       "tiers[0].steps[1]", "max_canary_weight = 0.5"},
      {"tiers: [{name: t, min_budget_remaining: 0.5, max_canary_weight: 0.5, "
       "steps: [0.25, 0.05], max_concurrent: 1}]",
       "tiers[0].steps[1]", "in order"},
      {"tiers: [{name: t, min_budget_remaining: 0.5, max_canary_weight: 0.5, "
       "steps: [0.5], max_concurrent: 0}]",
       "tiers[0].max_concurrent", "at least 1"},
      {"tiers: [{name: t, min_budget_remaining: 0.5, max_canary_weight: 0.5, "
       "steps: [0.5], max_concurrent: 1, min_candidate_lower_bound: 0}]",
       "tiers[0].min_candidate_lower_bound", "> 0"},
      {"tiers: [{name: t, min_budget_remaining: 0.5, max_canary_weight: 0.5, "
       "steps: [0.5], max_concurrent: 1, weight: 2}]",
       "tiers[0].weight", "unknown field"},
  };
  for (const BadCase& c : cases) {
    auto parsed = ParseBudgetPolicyYaml(c.yaml, "p.yaml");
    ASSERT_FALSE(parsed.ok()) << c.yaml;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(parsed.status().message());
    EXPECT_TRUE(absl::StartsWith(message, "p.yaml: ")) << message;
    if (c.field != std::string("not valid YAML")) {
      EXPECT_TRUE(absl::EndsWith(
          message, "(configs/error_budget_policy.yaml documents every field)"))
          << message;
    }
    EXPECT_TRUE(absl::StrContains(message, c.field)) << message;
    EXPECT_TRUE(absl::StrContains(message, c.hint)) << message;
  }
}

// A lower tier may not explore more than the one above it (else a ticket
// alert, which moves down a tier, could widen exploration).
TEST(BudgetPolicyConfigTest, TiersMustNarrowAsTheBudgetFalls) {
  const std::string top =
      "  - {name: a, min_budget_remaining: 0.5, max_canary_weight: 0.5, "
      "steps: [0.5], min_candidate_lower_bound: 1.0, max_concurrent: 2}\n";
  const BadCase cases[] = {
      {"  - {name: b, min_budget_remaining: 0.6, max_canary_weight: 0.1, "
       "steps: [0.1], min_candidate_lower_bound: 1.0, max_concurrent: 1}",
       "tiers[1].min_budget_remaining", "most budget to least"},
      {"  - {name: b, min_budget_remaining: 0.2, max_canary_weight: 0.6, "
       "steps: [0.1], min_candidate_lower_bound: 1.0, max_concurrent: 1}",
       "tiers[1].max_canary_weight", "more traffic"},
      {"  - {name: b, min_budget_remaining: 0.2, max_canary_weight: 0.1, "
       "steps: [0.1], min_candidate_lower_bound: 1.0, max_concurrent: 3}",
       "tiers[1].max_concurrent", "more experiments"},
      {"  - {name: b, min_budget_remaining: 0.2, max_canary_weight: 0.1, "
       "steps: [0.1], min_candidate_lower_bound: 0.9, max_concurrent: 1}",
       "tiers[1].min_candidate_lower_bound", "weaker evidence"},
      {"  - {name: a, min_budget_remaining: 0.2, max_canary_weight: 0.1, "
       "steps: [0.1], min_candidate_lower_bound: 1.0, max_concurrent: 1}",
       "tiers[1].name", "names two tiers"},
  };
  for (const BadCase& c : cases) {
    auto parsed = ParseBudgetPolicyYaml(
        std::string("tiers:\n") + top + c.yaml + "\n", "p.yaml");
    ASSERT_FALSE(parsed.ok()) << c.yaml;
    const std::string message(parsed.status().message());
    EXPECT_TRUE(absl::StrContains(message, c.field)) << message;
    EXPECT_TRUE(absl::StrContains(message, c.hint)) << message;
  }
}

TEST(BudgetPolicyConfigTest, AMissingFileIsNotFoundNamingIt) {
  auto loaded = LoadBudgetPolicy("/nonexistent/policy.yaml");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(
      absl::StrContains(loaded.status().message(),
                        "/nonexistent/policy.yaml; give an existing file "
                        "(configs/error_budget_policy.yaml is an example)"))
      << loaded.status();
}

}  // namespace
}  // namespace phaseloop::canary
