#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_

// `phaseloop decisions ship --buffer FILE`: stores spooled decision records
// in the replay buffer (upsert, one transaction), then renames their spool
// files `*.shipped` (a crash in between ships them again, harmlessly). The
// shipped files stay for `stats` until the spool's cap needs their space
// (spool_space.h).
// `phaseloop decisions show [FILE...|--spool DIR]`: the records, readable
// (a block per record) or --json (a line per record).
// `phaseloop stats`: what phaseloop-cc did (decision_stats.h), from the
// spool (shipped files kept included) since the last `stats --zero`, or the
// unshipped spool plus a buffer; a table, or --json. `--zero` moves the zero
// point to now (a marker file); no record is deleted.

#include <iosfwd>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace phaseloop::cc_wrapper {

void AddDecisionsCommand(CLI::App& app, int& exit_code);
void AddStatsCommand(CLI::App& app, int& exit_code);

struct ShipFlags {
  std::string spool;  // "" = the wrapper's own spool directory
  std::string buffer;
};
int RunShip(const ShipFlags& flags, std::ostream& out, std::ostream& err);

struct ShowFlags {
  std::vector<std::string> files;  // spool files; none: the whole spool
  std::string spool;
  bool json = false;
};
int RunShow(const ShowFlags& flags, std::ostream& out, std::ostream& err);

struct StatsFlags {
  std::string spool;
  // Count the unshipped spool and everything in this buffer (not zeroed)
  // instead of the whole spool.
  std::string buffer;
  bool json = false;
  bool zero = false;  // set the zero point to now, then print nothing
};
int RunStats(const StatsFlags& flags, std::ostream& out, std::ostream& err);

// `<spool>/stats.zero`, written by --zero: the time and the spool's dropped
// and evicted counters at that moment.
inline constexpr char kStatsZeroFile[] = "stats.zero";

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_
