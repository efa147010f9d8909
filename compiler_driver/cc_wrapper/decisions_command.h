#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISIONS_COMMAND_H_

// `phaseloop decisions ship --kafka BOOTSTRAP | --buffer FILE`: ships the
// spooled decision records (spool_shipping.h) and renames the spool files
// that arrived `*.shipped` (a crash in between ships them again,
// harmlessly: receivers upsert by decision_id). --kafka (default
// $PHASELOOP_KAFKA when --buffer is not given; the two exclude each other)
// produces every record to phaseloop.decisions through the sender the
// phaseloop binary passes to AddDecisionsCommand (compiler_driver/ links no
// Kafka), and marks a file shipped only once every record of it was
// acknowledged; files that were not stay, are named, and the exit code is 1.
// --buffer stores them all in one transaction, or none. The shipped files
// stay for `stats` until the spool's cap needs their space (spool_space.h).
// `phaseloop decisions show [FILE...|--spool DIR]`: the records, readable
// (a block per record) or --json (a line per record).
// `phaseloop stats`: what phaseloop-cc did (decision_stats.h), from the
// spool (shipped files kept included) since the last `stats --zero`, or the
// unshipped spool plus a buffer; a table, or --json. `--zero` moves the zero
// point to now (a marker file); no record is deleted.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::cc_wrapper {

// Produces decision batches to phaseloop.decisions on the Kafka cluster at
// `bootstrap` and waits for the delivery reports; one status per batch, OK
// when every record of it was acknowledged (replay_buffer's
// ProduceDecisionBatches, which the phaseloop binary passes).
using KafkaDecisionSender = std::function<std::vector<absl::Status>(
    const std::string& bootstrap,
    const std::vector<const v1::DecisionBatch*>& batches)>;

// Without a sender, `decisions ship --kafka` says this build cannot.
void AddDecisionsCommand(CLI::App& app, int& exit_code,
                         KafkaDecisionSender kafka_sender = nullptr);
void AddStatsCommand(CLI::App& app, int& exit_code);

struct ShipFlags {
  std::string spool;  // "" = the wrapper's own spool directory
  // Exactly one of the two (the command line resolves $PHASELOOP_KAFKA).
  std::string buffer;
  std::string kafka;
  KafkaDecisionSender kafka_sender;  // needed for `kafka`
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
