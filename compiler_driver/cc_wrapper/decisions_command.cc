#include "compiler_driver/cc_wrapper/decisions_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <ostream>

#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/wrapper_config.h"
#include "nlohmann/json.hpp"
#include "replay_buffer/decision_store.h"

namespace phaseloop::cc_wrapper {
namespace {

std::string SpoolDir(const std::string& flag) {
  if (!flag.empty()) return flag;
  WrapperConfig config;
  std::string ignored;
  LoadWrapperConfig("", ProcessEnvironment(), &config, &ignored);
  return config.spool_dir;
}

// Nearest-rank percentile; 0 for no values.
int64_t Percentile(std::vector<int64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * (values.size() - 1))];
}

std::string JsonString(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace);
}

}  // namespace

int RunShip(const ShipFlags& flags, std::ostream& out, std::ostream& err) {
  const std::string spool = SpoolDir(flags.spool);
  absl::StatusOr<SpoolContents> contents = ReadSpool(spool);
  if (!contents.ok()) {
    err << "phaseloop decisions ship: " << contents.status().message() << "\n";
    return command::kExitBadInput;
  }
  auto store = replay_buffer::DecisionStore::Open(flags.buffer);
  if (!store.ok()) {
    err << "phaseloop decisions ship: " << store.status().message() << "\n";
    return command::kExitBadInput;
  }
  std::vector<v1::Decision> decisions;
  for (const SpoolFile& file : contents->files) {
    for (const v1::Decision& d : file.batch.decisions()) decisions.push_back(d);
  }
  absl::Status stored = (*store)->Upsert(decisions);
  if (!stored.ok()) {
    err << "phaseloop decisions ship: nothing shipped, the spool is "
           "untouched: "
        << stored.message() << "\n";
    return command::kExitInternal;
  }
  for (const SpoolFile& file : contents->files) unlink(file.path.c_str());
  out << "shipped " << decisions.size() << " decisions from "
      << contents->files.size() << " spool files in " << spool << " to "
      << flags.buffer << "\n";
  for (const std::string& path : contents->corrupt) {
    err << "warning: left unreadable spool file " << path
        << " (not a DecisionBatch; inspect or delete it)\n";
  }
  return command::kExitOk;
}

int RunStats(const StatsFlags& flags, std::ostream& out, std::ostream& err) {
  const std::string spool = SpoolDir(flags.spool);
  absl::StatusOr<SpoolContents> contents = ReadSpool(spool);
  if (!contents.ok()) {
    err << "phaseloop stats: " << contents.status().message() << "\n";
    return command::kExitBadInput;
  }
  std::map<std::string, int64_t> by_outcome;
  std::map<std::pair<std::string, std::string>, int64_t> by_reason;
  // Optimised decisions (spool) by the policy that made them.
  std::map<std::string, int64_t> optimized_by_policy;
  std::vector<int64_t> compile_us, optimize_us, policy_us;
  int64_t records = 0;
  for (const SpoolFile& file : contents->files) {
    for (const v1::Decision& d : file.batch.decisions()) {
      ++records;
      if (d.outcome() == v1::OPTIMIZED) {
        compile_us.push_back(d.compile_time_us());
        optimize_us.push_back(d.optimize_time_us());
        policy_us.push_back(d.policy_time_us());
        ++optimized_by_policy[d.policy_version()];
      }
      ++by_outcome[OutcomeName(d.outcome())];
      if (!d.reason().empty()) {
        ++by_reason[{OutcomeName(d.outcome()), d.reason()}];
      }
    }
  }
  if (!flags.buffer.empty()) {
    auto store = replay_buffer::DecisionStore::Open(flags.buffer);
    if (!store.ok()) {
      err << "phaseloop stats: " << store.status().message() << "\n";
      return command::kExitBadInput;
    }
    for (const auto& [key, count] : (*store)->CountByOutcomeAndReason()) {
      records += count;
      by_outcome[key.first] += count;
      if (!key.second.empty()) by_reason[key] += count;
    }
  }
  if (flags.json) {
    out << "{\"spool\": " << JsonString(spool) << ", \"records\": " << records
        << ", \"corrupt_files\": " << contents->corrupt.size()
        << ", \"by_outcome\": {";
    const char* sep = "";
    for (const auto& [outcome, count] : by_outcome) {
      out << sep << JsonString(outcome) << ": " << count;
      sep = ", ";
    }
    out << "}, \"by_reason\": {";
    sep = "";
    std::map<std::string, int64_t> reasons;
    for (const auto& [key, count] : by_reason) reasons[key.second] += count;
    for (const auto& [reason, count] : reasons) {
      out << sep << JsonString(reason) << ": " << count;
      sep = ", ";
    }
    out << "}, \"optimized_by_policy\": {";
    sep = "";
    for (const auto& [version, count] : optimized_by_policy) {
      out << sep << JsonString(version) << ": " << count;
      sep = ", ";
    }
    out << "}, \"optimized_time_us\": {";
    sep = "";
    for (const auto& [name, values] :
         {std::pair<const char*, std::vector<int64_t>*>{"compile", &compile_us},
          {"optimize", &optimize_us},
          {"policy", &policy_us}}) {
      out << sep << "\"" << name << "\": {\"p50\": " << Percentile(*values, 0.5)
          << ", \"p90\": " << Percentile(*values, 0.9) << "}";
      sep = ", ";
    }
    out << "}}\n";
    return command::kExitOk;
  }
  out << "phaseloop-cc decisions in " << spool
      << (flags.buffer.empty() ? "" : " and " + flags.buffer) << ": " << records
      << " records\n\n";
  out << std::left << std::setw(14) << "outcome" << std::setw(28) << "reason"
      << std::right << std::setw(8) << "count"
      << "\n";
  for (const auto& [outcome, count] : by_outcome) {
    out << std::left << std::setw(14) << outcome << std::setw(28) << "(all)"
        << std::right << std::setw(8) << count << "\n";
    for (const auto& [key, n] : by_reason) {
      if (key.first != outcome) continue;
      out << std::left << std::setw(14) << "" << std::setw(28) << key.second
          << std::right << std::setw(8) << n << "\n";
    }
  }
  if (!compile_us.empty()) {
    out << "\noptimized translation units (spool), p50 / p90: whole wrapper "
        << Percentile(compile_us, 0.5) / 1000.0 << " / "
        << Percentile(compile_us, 0.9) / 1000.0 << " ms, passes + codegen "
        << Percentile(optimize_us, 0.5) / 1000.0 << " / "
        << Percentile(optimize_us, 0.9) / 1000.0 << " ms, policy decision "
        << Percentile(policy_us, 0.5) << " / " << Percentile(policy_us, 0.9)
        << " us\n";
  }
  if (!optimized_by_policy.empty()) {
    out << "\noptimized translation units (spool) by policy_version:\n";
    for (const auto& [version, count] : optimized_by_policy) {
      out << "  " << std::left << std::setw(34)
          << (version.empty() ? "(none)" : version) << std::right
          << std::setw(8) << count << "\n";
    }
  }
  if (!contents->corrupt.empty()) {
    out << "\n"
        << contents->corrupt.size()
        << " unreadable spool files left in place\n";
  }
  return command::kExitOk;
}

void AddDecisionsCommand(CLI::App& app, int& exit_code) {
  CLI::App* decisions = command::AddCommandGroup(
      app, "decisions", "Decision records written by phaseloop-cc");
  auto [ship, flags] = command::AddSubcommand<ShipFlags>(
      *decisions, "ship", "Move spooled decision records into a replay buffer",
      exit_code,
      [](const ShipFlags& f) { return RunShip(f, std::cout, std::cerr); });
  ship->add_option("--buffer", flags->buffer,
                   "SQLite replay buffer file (created if missing)")
      ->required();
  ship->add_option("--spool", flags->spool,
                   "spool directory (default: the wrapper's, "
                   "$PHASELOOP_SPOOL or ~/.cache/phaseloop/spool)");
}

void AddStatsCommand(CLI::App& app, int& exit_code) {
  auto [stats, flags] = command::AddSubcommand<StatsFlags>(
      app, "stats", "What phaseloop-cc did: counts by outcome and reason",
      exit_code,
      [](const StatsFlags& f) { return RunStats(f, std::cout, std::cerr); });
  stats->add_option("--spool", flags->spool,
                    "spool directory (default: the wrapper's)");
  stats->add_option("--buffer", flags->buffer,
                    "also count decisions already shipped to this buffer");
  stats->add_flag("--json", flags->json, "print JSON");
}

}  // namespace phaseloop::cc_wrapper
