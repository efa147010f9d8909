#ifndef PHASELOOP_COMMON_KAFKA_STATE_DIR_H_
#define PHASELOOP_COMMON_KAFKA_STATE_DIR_H_

// Where phaseloop's Kafka clients keep, on the local disk, what must
// outlive both the process and the cluster (the embedded cluster keeps
// everything in memory):
//   STATE/lost-records.jsonl   one line per gap of records a consumer was
//                              owed and found deleted (lost_records_log.h)
//   STATE/spool/NAME/          records a producer could not deliver, produced
//                              again first by the next run (delivery_spool.h)
// STATE = DefaultStateDir(): $PHASELOOP_STATE_DIR, else
// $XDG_STATE_HOME/phaseloop, else $HOME/.local/state/phaseloop.

#include <string>

namespace phaseloop::kafka {

// "" when none of the variables above is set.
std::string DefaultStateDir();
// state_dir + "/lost-records.jsonl" ("" for no state_dir).
std::string LostRecordsLogPath(const std::string& state_dir);
// state_dir + "/spool/" + name ("" for no state_dir).
std::string SpoolDirPath(const std::string& state_dir, const std::string& name);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_STATE_DIR_H_
