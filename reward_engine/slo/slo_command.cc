#include "reward_engine/slo/slo_command.h"

#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "common/command/topic_name_check.h"
#include "common/kafka/topics.h"
#include "nlohmann/json.hpp"
#include "reward_engine/slo/budget_reader.h"
#include "reward_engine/slo/slo_config.h"

namespace phaseloop::slo {
namespace {

using nlohmann::json;

std::string Percent(double fraction) {
  return absl::StrFormat("%.1f%%", fraction * 100);
}

// "0.99" → "99%", "0.995" → "99.5%".
std::string TargetText(double target) {
  std::string text = absl::StrFormat("%.4f", target * 100);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + "%";
}

std::string FiringAlerts(const v1::BudgetStatus& status) {
  std::vector<std::string> firing;
  for (const auto& alert : status.alerts()) {
    if (alert.firing()) firing.push_back(alert.name());
  }
  return firing.empty() ? "-" : absl::StrJoin(firing, ",");
}

json StatusJson(const v1::BudgetStatus& status) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(status, &text, options)
           .ok()) {
    return json::object();
  }
  return json::parse(text);
}

void PrintStatusTable(const std::vector<v1::BudgetStatus>& statuses,
                      std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"SERVICE", "SLO", "GROUP", "TARGET", "WINDOW", "BAD/TOTAL",
       "BUDGET LEFT", "BURN 5m", "30m", "1h", "6h", "3d", "ALERTS"}};
  for (const auto& s : statuses) {
    std::vector<std::string> row = {
        s.service(),
        s.slo_name(),
        s.group(),
        TargetText(s.target()),
        absl::StrCat(FormatDurationMs(s.window_ms()),
                     s.budgeting_method() == kTimeslices ? " slices" : ""),
        absl::StrCat(s.bad(), "/", s.total()),
        absl::StrCat(Percent(s.error_budget_remaining()),
                     s.budget_exhausted() ? " (spent)" : "")};
    for (const auto& rate : s.burn_rates()) {
      row.push_back(absl::StrFormat("%.2f", rate.burn_rate()));
    }
    row.push_back(FiringAlerts(s));
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  for (const auto& row : rows) {
    for (size_t i = 0; i + 1 < row.size(); ++i) {
      out << std::left << std::setw(static_cast<int>(widths[i] + 2)) << row[i];
    }
    out << row.back() << "\n";
  }
}

}  // namespace

int RunSloStatus(const SloStatusFlags& flags, std::ostream& out,
                 std::ostream& err) {
  if (flags.kafka.empty()) {
    err << "phaseloop slo status: --kafka BOOTSTRAP is required (or set "
           "PHASELOOP_KAFKA)\n";
    return command::kExitBadInput;
  }
  if (flags.timeout_ms <= 0) {
    err << "phaseloop slo status: --timeout-ms must be > 0\n";
    return command::kExitBadInput;
  }
  const std::string topic =
      flags.topic.empty() ? std::string(kafka::kBudgetTopic) : flags.topic;
  auto snapshot = ReadLatestBudgets(
      flags.kafka, topic, std::chrono::milliseconds(flags.timeout_ms));
  if (!snapshot.ok()) {
    err << "phaseloop slo status: " << snapshot.status().message() << "\n";
    return command::kExitInternal;
  }
  std::vector<v1::BudgetStatus> shown;
  for (const auto& status : snapshot->latest) {
    if (flags.service.empty() || status.service() == flags.service) {
      shown.push_back(status);
    }
  }
  if (snapshot->malformed > 0) {
    err << "phaseloop slo status: " << SkippedRecordsNote(*snapshot, topic)
        << "\n";
    if (OnlyOtherRecords(*snapshot)) return command::kExitBadInput;
  }
  if (flags.json) {
    json doc = {{"topic", topic},
                {"records", snapshot->records},
                {"statuses", json::array()}};
    for (const auto& status : shown)
      doc["statuses"].push_back(StatusJson(status));
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  if (shown.empty()) {
    out << "no budget status on " << topic
        << (flags.service.empty()
                ? ""
                : absl::StrCat(" for service ", flags.service))
        << " yet (the reward engine publishes one per SLO and group as "
           "windows close)\n";
    return command::kExitOk;
  }
  PrintStatusTable(shown, out);
  int64_t as_of = 0;
  for (const auto& s : shown) as_of = std::max(as_of, s.as_of_ms());
  out << "burn rate = (bad / total) / (1 - target); alerts when both windows "
         "burn fast enough to spend: page 1h&5m 2 % of the budget, "
         "ticket-fast 6h&30m 5 %, ticket-slow 3d&6h 10 % (14.4, 6, 1 for a "
         "30-day SLO); latest as of "
      << as_of << " ms event time\n";
  return command::kExitOk;
}

int RunSloCheck(const std::string& path, bool json_output, std::ostream& out,
                std::ostream& err) {
  std::error_code ec;
  auto slos = std::filesystem::is_directory(path, ec) ? LoadSloDirectory(path)
                                                      : LoadSloFile(path);
  if (!slos.ok()) {
    err << "phaseloop slo check: " << slos.status().message() << "\n";
    return command::kExitBadInput;
  }
  if (json_output) {
    json doc = json::array();
    for (const Slo& slo : *slos) {
      json entry = {{"name", slo.name},
                    {"service", slo.service},
                    {"source", slo.source},
                    {"threshold_ms", slo.threshold_ms},
                    {"target", slo.target},
                    {"window_ms", slo.window_ms},
                    {"window", FormatDurationMs(slo.window_ms)},
                    {"budgeting_method", slo.budgeting_method}};
      if (!slo.display_name.empty()) entry["display_name"] = slo.display_name;
      if (slo.budgeting_method == kTimeslices) {
        entry["time_slice_target"] = slo.time_slice_target;
        // 0: one reward-engine window per slice.
        entry["time_slice_window_ms"] = slo.time_slice_window_ms;
      }
      doc.push_back(entry);
    }
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  for (const Slo& slo : *slos) {
    out << slo.service << "/" << slo.name << " (" << slo.source
        << "): requests good when they succeed within " << slo.threshold_ms
        << " ms (reward SLO at p95); target " << TargetText(slo.target)
        << " over a rolling " << FormatDurationMs(slo.window_ms) << "; ";
    if (slo.budgeting_method == kTimeslices) {
      out << "Timeslices: a slice ("
          << (slo.time_slice_window_ms > 0
                  ? FormatDurationMs(slo.time_slice_window_ms)
                  : std::string("one reward-engine window"))
          << ") is good when at least " << TargetText(slo.time_slice_target)
          << " of its requests are good; " << TargetText(1 - slo.target)
          << " of slices may be bad\n";
    } else {
      out << "Occurrences: " << TargetText(1 - slo.target)
          << " of requests may be bad\n";
    }
  }
  err << slos->size() << " valid SLO(s)\n";
  return command::kExitOk;
}

void AddSloCommand(CLI::App& app, int& exit_code) {
  CLI::App* slo = command::AddCommandGroup(
      app, "slo",
      "Service level objectives: error budgets and burn-rate alerts");

  auto [status, status_flags] = command::AddSubcommand<SloStatusFlags>(
      *slo, "status",
      "Latest error budget, burn rates and alerts per SLO and group, read "
      "from the budget topic (no consumer group is joined)",
      exit_code, [](const SloStatusFlags& f) {
        return RunSloStatus(f, std::cout, std::cerr);
      });
  command::AddKafkaOption(*status, status_flags->kafka);
  status->add_option("--service", status_flags->service, "only this service");
  status->add_option("--topic", status_flags->topic, "budget topic")
      ->default_str(std::string(kafka::kBudgetTopic))
      ->check(command::KafkaTopicName());
  status
      ->add_option("--timeout-ms", status_flags->timeout_ms,
                   "give up reading the topic after this long")
      ->capture_default_str();
  status->add_flag("--json", status_flags->json, "print JSON");

  struct CheckFlags {
    std::string path;
    bool json = false;
  };
  auto [check, check_flags] = command::AddSubcommand<CheckFlags>(
      *slo, "check", "Validate OpenSLO v1 YAML offline and print what it means",
      exit_code, [](const CheckFlags& f) {
        return RunSloCheck(f.path, f.json, std::cout, std::cerr);
      });
  check
      ->add_option("FILE_OR_DIR", check_flags->path,
                   "an SLO file, or a directory of *.yaml (e.g. configs/slo)")
      ->required();
  check->add_flag("--json", check_flags->json, "print JSON");
}

}  // namespace phaseloop::slo
