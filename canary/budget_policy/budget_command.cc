#include "canary/budget_policy/budget_command.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "canary/budget_policy/budget_policy_config.h"
#include "canary/budget_policy/exploration_allowance.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/subcommand.h"
#include "common/command/topic_name_check.h"
#include "common/kafka/topics.h"
#include "nlohmann/json.hpp"
#include "reward_engine/slo/budget_reader.h"

namespace phaseloop::canary {
namespace {

using nlohmann::json;

constexpr char kName[] = "phaseloop canary budget: ";

std::string Percent(double fraction) {
  return absl::StrFormat("%.1f %%", fraction * 100);
}

std::string Steps(const std::vector<double>& steps) {
  std::vector<std::string> texts;
  for (double step : steps) texts.push_back(Percent(step));
  return texts.empty() ? "-" : absl::StrJoin(texts, " → ");
}

json OptionalJson(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json AllowanceJson(const BudgetCommandFlags& flags, const std::string& topic,
                   const BudgetPolicy& policy,
                   const std::vector<v1::BudgetStatus>& statuses,
                   const ExplorationAllowance& a) {
  json counted = json::array();
  for (const v1::BudgetStatus& s : statuses) {
    std::vector<std::string> firing;
    for (const auto& alert : s.alerts()) {
      if (alert.firing()) firing.push_back(alert.name());
    }
    counted.push_back({{"slo_name", s.slo_name()},
                       {"group", s.group()},
                       {"error_budget_remaining", s.error_budget_remaining()},
                       {"budget_exhausted", s.budget_exhausted()},
                       {"total", s.total()},
                       {"bad", s.bad()},
                       {"as_of_ms", s.as_of_ms()},
                       {"alerts_firing", firing}});
  }
  return {
      {"service", flags.service},
      {"topic", topic},
      {"policy", policy.source.empty() ? "built-in" : policy.source},
      {"allowed", a.allowed},
      {"tier", a.tier},
      {"max_canary_weight", a.max_canary_weight},
      {"steps", a.steps},
      {"max_concurrent", a.max_concurrent},
      {"running", flags.running},
      {"candidate_lower_bound", std::isnan(flags.candidate_lower_bound)
                                    ? json(nullptr)
                                    : json(flags.candidate_lower_bound)},
      {"min_candidate_lower_bound", OptionalJson(a.min_candidate_lower_bound)},
      {"budget_remaining", OptionalJson(a.budget_remaining)},
      {"budget_source", a.budget_source},
      {"alerts_firing", a.firing_alerts},
      {"reasons", a.reasons},
      {"statuses", counted}};
}

void PrintAllowance(const BudgetCommandFlags& flags,
                    const std::vector<v1::BudgetStatus>& statuses,
                    const ExplorationAllowance& a, std::ostream& out) {
  out << "service " << flags.service << ": tier " << a.tier << ", exploration "
      << (a.allowed ? "ALLOWED" : "NOT ALLOWED") << "\n";
  const auto row = [&out](const std::string& name, const std::string& value) {
    out << "  " << absl::StrFormat("%-22s", name) << value << "\n";
  };
  row("max canary weight", Percent(a.max_canary_weight));
  row("steps", Steps(a.steps));
  row("max concurrent",
      absl::StrCat(a.max_concurrent, " (running ", flags.running, ")"));
  row("candidate lower bound",
      absl::StrCat(
          a.min_candidate_lower_bound
              ? absl::StrFormat("needs >= %.3f", *a.min_candidate_lower_bound)
              : std::string("not needed"),
          ", has ",
          std::isnan(flags.candidate_lower_bound)
              ? std::string("none")
              : absl::StrFormat("%.3f", flags.candidate_lower_bound)));
  row("budget counted", a.budget_remaining
                            ? absl::StrCat(Percent(*a.budget_remaining),
                                           " left (", a.budget_source, ")")
                            : std::string("none"));
  row("alerts firing",
      a.firing_alerts.empty() ? "-" : absl::StrJoin(a.firing_alerts, ", "));
  out << "statuses of " << flags.service << ":\n";
  if (statuses.empty()) out << "  (none on the topic)\n";
  for (const v1::BudgetStatus& s : statuses) {
    std::vector<std::string> firing;
    for (const auto& alert : s.alerts()) {
      if (alert.firing()) firing.push_back(alert.name());
    }
    // A name longer than its column still leaves a space before the next.
    out << "  " << absl::StrFormat("%-28s ", s.slo_name() + "/" + s.group())
        << absl::StrFormat("%-14s", Percent(s.error_budget_remaining()) +
                                        (s.budget_exhausted() ? " spent" : ""))
        << absl::StrCat(s.bad(), "/", s.total(), " bad  alerts ",
                        firing.empty() ? "-" : absl::StrJoin(firing, ","))
        << "\n";
  }
  out << "reasons:\n";
  for (const std::string& reason : a.reasons) out << "  - " << reason << "\n";
}

}  // namespace

int RunCanaryBudget(const BudgetCommandFlags& flags, std::ostream& out,
                    std::ostream& err) {
  if (flags.service.empty()) {
    err << kName << "--service NAME is required (the service of the SLOs)\n";
    return command::kExitBadInput;
  }
  if (flags.kafka.empty()) {
    err << kName
        << "--kafka BOOTSTRAP is required (or set PHASELOOP_KAFKA): the "
           "cluster the reward engine publishes budgets to\n";
    return command::kExitBadInput;
  }
  if (flags.running < 0) {
    err << kName << "--running " << flags.running
        << ": give the number of canaries already running (>= 0)\n";
    return command::kExitBadInput;
  }
  if (!std::isnan(flags.candidate_lower_bound) &&
      !(flags.candidate_lower_bound > 0 &&
        std::isfinite(flags.candidate_lower_bound))) {
    err << kName << "--candidate-lower-bound " << flags.candidate_lower_bound
        << ": give the staging speedup interval's lower bound, a ratio > 0 "
           "(1.0 = as fast as stable)\n";
    return command::kExitBadInput;
  }
  if (flags.timeout_ms <= 0) {
    err << kName << "--timeout-ms must be > 0\n";
    return command::kExitBadInput;
  }
  BudgetPolicy policy;
  if (!flags.policy.empty()) {
    auto loaded = LoadBudgetPolicy(flags.policy);
    if (!loaded.ok()) {
      err << kName << "--policy: " << loaded.status().message() << "\n";
      return command::ExitCodeOf(loaded.status());
    }
    policy = std::move(*loaded);
  }
  const std::string topic =
      flags.topic.empty() ? std::string(kafka::kBudgetTopic) : flags.topic;
  auto snapshot = slo::ReadLatestBudgets(
      flags.kafka, topic, std::chrono::milliseconds(flags.timeout_ms));
  if (!snapshot.ok()) {
    err << kName << snapshot.status().message() << "\n";
    return command::kExitInternal;
  }
  if (snapshot->malformed > 0) {
    err << kName << slo::SkippedRecordsNote(*snapshot, topic) << "\n";
    if (slo::OnlyOtherRecords(*snapshot)) return command::kExitBadInput;
  }
  ExplorationRequest request;
  request.service = flags.service;
  std::vector<v1::BudgetStatus> statuses;
  for (const v1::BudgetStatus& status : snapshot->latest) {
    if (status.service() == flags.service) statuses.push_back(status);
  }
  request.budgets = statuses;
  if (!std::isnan(flags.candidate_lower_bound)) {
    request.candidate_lower_bound = flags.candidate_lower_bound;
  }
  request.running_experiments = flags.running;
  const ExplorationAllowance allowance =
      ComputeExplorationAllowance(policy, request);
  if (flags.json) {
    out << AllowanceJson(flags, topic, policy, statuses, allowance)
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    PrintAllowance(flags, statuses, allowance, out);
  }
  return command::kExitOk;
}

void AddBudgetCommand(CLI::App* canary, int& exit_code) {
  auto budget = command::AddSubcommand<BudgetCommandFlags>(
      *canary, "budget",
      "How much exploration the error budget allows a candidate now: tier, "
      "canary weight, steps, experiments at once, with reasons (reads the "
      "budget topic; no consumer group is joined)",
      exit_code, [](const BudgetCommandFlags& flags) {
        return RunCanaryBudget(flags, std::cout, std::cerr);
      });
  BudgetCommandFlags& flags = *budget.flags;
  budget.app->add_option("--service", flags.service, "service of the SLOs")
      ->required();
  budget.app->add_option(
      "--policy", flags.policy,
      "error budget policy, YAML (configs/error_budget_policy.yaml); "
      "default: the built-in defaults that file documents");
  budget.app
      ->add_option("--candidate-lower-bound", flags.candidate_lower_bound,
                   "lower bound of the candidate's staging speedup "
                   "interval vs stable (1.02 = at least 2 % faster); "
                   "omit when it was not staged")
      // NaN is "omitted" inside; given, it was taken for no flag at all.
      ->check(command::PositiveNumber());
  budget.app
      ->add_option("--running", flags.running,
                   "canaries already running for this service")
      ->capture_default_str();
  command::AddKafkaOption(*budget.app, flags.kafka);
  budget.app->add_option("--topic", flags.topic, "budget topic")
      ->default_str(std::string(kafka::kBudgetTopic))
      ->check(command::KafkaTopicName());
  budget.app
      ->add_option("--timeout-ms", flags.timeout_ms,
                   "give up reading the topic after this long")
      ->capture_default_str();
  budget.app->add_flag("--json", flags.json, "print JSON");
}

}  // namespace phaseloop::canary
