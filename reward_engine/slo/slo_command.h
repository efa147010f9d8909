#ifndef PHASELOOP_REWARD_ENGINE_SLO_SLO_COMMAND_H_
#define PHASELOOP_REWARD_ENGINE_SLO_SLO_COMMAND_H_

// `phaseloop slo status --kafka BOOTSTRAP [--service S] [--json]`: the
// latest error budget status per (service, SLO, group) on the budget topic
// (budget_reader.h), as a table (budget left, burn rates 5m..3d, alerts
// firing) or as one JSON document.
//
// `phaseloop slo check FILE_OR_DIR [--json]`: validates OpenSLO YAML offline
// (slo_config.h) and prints what it understood, one line per SLO.
//
// Exit codes: 0 ok, 1 internal failure (Kafka unreachable, timed out),
// 2 bad input (flags, invalid SLO files).

#include <chrono>
#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::slo {

void AddSloCommand(CLI::App& app, int& exit_code);

struct SloStatusFlags {
  std::string kafka;
  std::string topic;    // default kafka::kBudgetTopic
  std::string service;  // "" = every service
  bool json = false;
  int timeout_ms = 10000;
};

int RunSloStatus(const SloStatusFlags& flags, std::ostream& out,
                 std::ostream& err);

int RunSloCheck(const std::string& path, bool json, std::ostream& out,
                std::ostream& err);

}  // namespace phaseloop::slo

#endif  // PHASELOOP_REWARD_ENGINE_SLO_SLO_COMMAND_H_
