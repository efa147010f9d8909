#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_

// `phaseloop decisions ship --buffer FILE`: moves spooled decision records
// into the replay buffer (upsert, one transaction, then the spool files are
// removed: a crash in between ships them again, harmlessly).
// `phaseloop stats`: counts of what phaseloop-cc did, by outcome and reason,
// from the spool and optionally a buffer; a table, or --json.

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::cc_wrapper {

void AddDecisionsCommand(CLI::App& app, int& exit_code);
void AddStatsCommand(CLI::App& app, int& exit_code);

struct ShipFlags {
  std::string spool;  // "" = the wrapper's own spool directory
  std::string buffer;
};
int RunShip(const ShipFlags& flags, std::ostream& out, std::ostream& err);

struct StatsFlags {
  std::string spool;
  std::string buffer;  // also count what was shipped there
  bool json = false;
};
int RunStats(const StatsFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_
