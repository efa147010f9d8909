// The exploration allowance on fixed BudgetStatus records: every tier, both
// alert kinds, the no-data rules, concurrency, staging evidence, which
// groups count, and ClipSteps.
#include "canary/budget_policy/exploration_allowance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"

namespace phaseloop::canary {
namespace {

constexpr char kService[] = "demo-service";

// A status of `group` with `remaining` of its budget left (target 99 %,
// 10000 events) and the named alerts firing.
v1::BudgetStatus Status(const std::string& group, double remaining,
                        std::vector<std::string> firing = {},
                        const std::string& service = kService) {
  v1::BudgetStatus s;
  s.set_service(service);
  s.set_slo_name("latency");
  s.set_group(group);
  s.set_target(0.99);
  s.set_total(10000);
  s.set_bad(static_cast<int64_t>((1 - remaining) * 0.01 * 10000));
  s.set_good(s.total() - s.bad());
  s.set_error_budget_remaining(remaining);
  s.set_budget_exhausted(remaining <= 0);
  for (const char* name : {"page", "ticket-fast", "ticket-slow"}) {
    v1::BurnRateAlert* alert = s.add_alerts();
    alert->set_name(name);
    alert->set_long_window("1h");
    alert->set_short_window("5m");
    alert->set_threshold(14.4);
    for (const std::string& f : firing) {
      if (f == name) {
        alert->set_firing(true);
        alert->set_long_burn_rate(20);
        alert->set_short_burn_rate(30);
      }
    }
  }
  return s;
}

ExplorationRequest Request(std::vector<v1::BudgetStatus> budgets,
                           std::optional<double> lower_bound = 1.02,
                           int running = 0) {
  ExplorationRequest request;
  request.service = kService;
  request.budgets = std::move(budgets);
  request.candidate_lower_bound = lower_bound;
  request.running_experiments = running;
  return request;
}

std::string Reasons(const ExplorationAllowance& a) {
  return absl::StrJoin(a.reasons, " | ");
}

void ExpectFrozen(const ExplorationAllowance& a, const std::string& why) {
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.tier, "frozen");
  EXPECT_EQ(a.max_canary_weight, 0);
  EXPECT_TRUE(a.steps.empty());
  EXPECT_EQ(a.max_concurrent, 0);
  EXPECT_TRUE(absl::StrContains(Reasons(a), why)) << Reasons(a);
  EXPECT_TRUE(absl::StrContains(Reasons(a), "only stable ships")) << Reasons(a);
}

const BudgetPolicy kPolicy;  // the defaults (configs/error_budget_policy.yaml)

TEST(ExplorationAllowanceTest, HealthyBudgetAllowsHalfTheTrafficInThreeSteps) {
  auto a = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.80)}, 0.985));
  EXPECT_TRUE(a.allowed) << Reasons(a);
  EXPECT_EQ(a.tier, "healthy");
  EXPECT_EQ(a.max_canary_weight, 0.50);
  EXPECT_EQ(a.steps, (std::vector<double>{0.05, 0.25, 0.50}));
  EXPECT_EQ(a.max_concurrent, 2);
  EXPECT_EQ(a.budget_remaining, 0.80);
  EXPECT_EQ(a.budget_source, "demo-service/latency/baseline");
  EXPECT_TRUE(absl::StrContains(Reasons(a), "80.0 % of the error budget left"))
      << Reasons(a);
}

TEST(ExplorationAllowanceTest, TierBoundariesAreInclusive) {
  EXPECT_EQ(
      ComputeExplorationAllowance(kPolicy, Request({Status("baseline", 0.50)}))
          .tier,
      "healthy");
  EXPECT_EQ(ComputeExplorationAllowance(kPolicy,
                                        Request({Status("baseline", 0.4999)}))
                .tier,
            "cautious");
  EXPECT_EQ(
      ComputeExplorationAllowance(kPolicy, Request({Status("baseline", 0.20)}))
          .tier,
      "cautious");
}

TEST(ExplorationAllowanceTest, CautiousTierAllowsTenPercentAndOneExperiment) {
  auto a = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.35)}, 1.01));
  EXPECT_TRUE(a.allowed) << Reasons(a);
  EXPECT_EQ(a.tier, "cautious");
  EXPECT_EQ(a.max_canary_weight, 0.10);
  EXPECT_EQ(a.steps, (std::vector<double>{0.05, 0.10}));
  EXPECT_EQ(a.max_concurrent, 1);
  // A candidate staged possibly more than 2 % slower.
  auto weak = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.35)}, 0.975));
  EXPECT_FALSE(weak.allowed);
  EXPECT_EQ(weak.tier, "cautious");
  EXPECT_TRUE(weak.steps.empty());
  EXPECT_TRUE(absl::StrContains(Reasons(weak), "0.975 is below tier cautious"))
      << Reasons(weak);
  // At most 2 % slower (the bound itself) is enough.
  EXPECT_TRUE(ComputeExplorationAllowance(
                  kPolicy, Request({Status("baseline", 0.35)}, 0.98))
                  .allowed);
}

TEST(ExplorationAllowanceTest, LowOrExhaustedBudgetFreezes) {
  ExpectFrozen(
      ComputeExplorationAllowance(kPolicy, Request({Status("baseline", 0.19)})),
      "below the last tier's 20.0 %");
  ExpectFrozen(
      ComputeExplorationAllowance(kPolicy, Request({Status("baseline", -0.5)})),
      "error budget exhausted on demo-service/latency/baseline");
  // budget_exhausted alone freezes as well.
  v1::BudgetStatus flagged = Status("baseline", 0.9);
  flagged.set_budget_exhausted(true);
  ExpectFrozen(ComputeExplorationAllowance(kPolicy, Request({flagged})),
               "exhausted");
  // A remaining budget that is not a number (outside input) would compare
  // false with everything and hide an exhausted one: it freezes.
  v1::BudgetStatus not_a_number = Status("baseline", 0.9);
  not_a_number.set_error_budget_remaining(std::nan(""));
  ExpectFrozen(ComputeExplorationAllowance(
                   kPolicy, Request({not_a_number, Status("baseline", -0.5)})),
               "has no finite error_budget_remaining");
}

TEST(ExplorationAllowanceTest, APageAlertAnywhereFreezes) {
  // Firing on the canary group, whose budget does not count: still frozen.
  ExpectFrozen(ComputeExplorationAllowance(
                   kPolicy, Request({Status("baseline", 0.95),
                                     Status("canary", 0.9, {"page"})})),
               "page alert firing on demo-service/latency/canary");
  BudgetPolicy baseline_alerts_only;
  baseline_alerts_only.alert_groups = {"baseline"};
  auto a = ComputeExplorationAllowance(
      baseline_alerts_only,
      Request({Status("baseline", 0.95), Status("canary", 0.9, {"page"})}));
  EXPECT_TRUE(a.allowed) << Reasons(a);
}

TEST(ExplorationAllowanceTest, ATicketAlertTakesExplorationDownATier) {
  auto a = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.90, {"ticket-slow"})}));
  EXPECT_TRUE(a.allowed) << Reasons(a);
  EXPECT_EQ(a.tier, "cautious");
  EXPECT_EQ(a.max_canary_weight, 0.10);
  EXPECT_TRUE(absl::StrContains(Reasons(a), "ticket-slow alert firing"))
      << Reasons(a);
  // From the last tier, a ticket freezes.
  ExpectFrozen(
      ComputeExplorationAllowance(
          kPolicy, Request({Status("baseline", 0.30, {"ticket-fast"})})),
      "past the last");
  // ticket_demotes_tiers: 0 ignores tickets.
  BudgetPolicy lenient;
  lenient.ticket_demotes_tiers = 0;
  EXPECT_EQ(ComputeExplorationAllowance(
                lenient, Request({Status("baseline", 0.90, {"ticket-fast"})}))
                .tier,
            "healthy");
}

TEST(ExplorationAllowanceTest, TheWorstCountedBudgetWinsAndTheCanaryIsLeftOut) {
  v1::BudgetStatus other_slo = Status("stable", 0.30);
  other_slo.set_slo_name("errors");
  auto a = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.90), other_slo,
                        Status("canary", -3.0),  // not counted by default
                        Status("baseline", -1.0, {}, "other-service")}));
  EXPECT_TRUE(a.allowed) << Reasons(a);
  EXPECT_EQ(a.tier, "cautious");
  EXPECT_EQ(a.budget_source, "demo-service/errors/stable");
  BudgetPolicy every_group;
  every_group.budget_groups = {"*"};
  ExpectFrozen(ComputeExplorationAllowance(
                   every_group,
                   Request({Status("baseline", 0.90), Status("canary", -3.0)})),
               "exhausted on demo-service/latency/canary");
}

TEST(ExplorationAllowanceTest,
     NoBudgetDataIsConservativeOrRefusedAsConfigured) {
  v1::BudgetStatus no_events = Status("baseline", 1.0);
  no_events.set_total(0);
  no_events.set_good(0);
  no_events.set_bad(0);
  for (const auto& budgets : {std::vector<v1::BudgetStatus>{},
                              std::vector<v1::BudgetStatus>{no_events},
                              std::vector<v1::BudgetStatus>{Status(
                                  "baseline", 0.9, {}, "other-service")}}) {
    auto a = ComputeExplorationAllowance(kPolicy, Request(budgets, 1.01));
    EXPECT_TRUE(a.allowed) << Reasons(a);
    EXPECT_EQ(a.tier, "cautious");
    EXPECT_FALSE(a.budget_remaining.has_value());
    EXPECT_TRUE(absl::StrContains(Reasons(a), "no_budget_data: conservative"))
        << Reasons(a);
  }
  BudgetPolicy refuse;
  refuse.no_budget_data = NoBudgetData::kRefuse;
  ExpectFrozen(ComputeExplorationAllowance(refuse, Request({})),
               "no_budget_data: refuse");
}

// budget_groups cannot be checked against a list (groups are free text), so
// a typo read as "no data"; the groups that have statuses are named.
TEST(ExplorationAllowanceTest,
     NoDataInTheBudgetGroupsNamesTheGroupsThatHaveIt) {
  BudgetPolicy typo;
  typo.budget_groups = {"baselin"};
  auto a = ComputeExplorationAllowance(
      typo, Request({Status("baseline", 0.9), Status("canary", 0.8)}));
  EXPECT_TRUE(absl::StrContains(Reasons(a),
                                "it has statuses in groups baseline,canary: is "
                                "budget_groups spelled as those?"))
      << Reasons(a);
}

TEST(ExplorationAllowanceTest, RunningExperimentsAreCappedPerTier) {
  auto healthy_one = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.9)}, 1.0, 1));
  EXPECT_TRUE(healthy_one.allowed) << Reasons(healthy_one);
  auto healthy_two = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.9)}, 1.0, 2));
  EXPECT_FALSE(healthy_two.allowed);
  EXPECT_EQ(healthy_two.tier, "healthy");
  EXPECT_EQ(healthy_two.max_concurrent, 2);
  EXPECT_TRUE(absl::StrContains(Reasons(healthy_two),
                                "2 experiment(s) already running"))
      << Reasons(healthy_two);
  EXPECT_FALSE(ComputeExplorationAllowance(
                   kPolicy, Request({Status("baseline", 0.3)}, 1.1, 1))
                   .allowed);
}

TEST(ExplorationAllowanceTest, MissingStagingEvidenceIsRefusedWhenAsked) {
  auto a = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.9)}, std::nullopt));
  EXPECT_FALSE(a.allowed);
  EXPECT_TRUE(absl::StrContains(Reasons(a), "no staging evidence"))
      << Reasons(a);
  BudgetPolicy no_evidence;
  no_evidence.tiers[0].min_candidate_lower_bound.reset();
  EXPECT_TRUE(ComputeExplorationAllowance(
                  no_evidence, Request({Status("baseline", 0.9)}, std::nullopt))
                  .allowed);
}

TEST(ExplorationAllowanceTest, ClipStepsCutsRequestedStepsToTheAllowance) {
  auto cautious = ComputeExplorationAllowance(
      kPolicy, Request({Status("baseline", 0.3)}, 1.01));
  EXPECT_EQ(ClipSteps({0.05, 0.25, 0.50}, cautious),
            (std::vector<double>{0.05, 0.10}));
  EXPECT_EQ(ClipSteps({0.01, 0.10}, cautious),
            (std::vector<double>{0.01, 0.10}));
  EXPECT_EQ(ClipSteps({0.5}, cautious), (std::vector<double>{0.10}));
  auto frozen =
      ComputeExplorationAllowance(kPolicy, Request({Status("baseline", 0.1)}));
  EXPECT_TRUE(ClipSteps({0.05}, frozen).empty());
}

}  // namespace
}  // namespace phaseloop::canary
