#ifndef PHASELOOP_COMMON_KAFKA_LOST_RECORDS_LOG_H_
#define PHASELOOP_COMMON_KAFKA_LOST_RECORDS_LOG_H_

// The dead-letter entry for records that are gone: when a consumer finds
// records it was owed deleted from Kafka (consumer.h, RecordsLostOf), the
// component appends one JSON line per gap to a local, durable, append-only
// log, so an operator can find every loss later (the embedded cluster keeps
// everything in memory, a dead-letter topic on it would vanish with it):
//
//   {"time":"2024-05-01T12:00:00.000Z","time_ms":1714564800000,
//    "topic":"phaseloop.search.episodes","partition":0,"first_offset":0,
//    "last_offset":15727,"count":15728,"group":"phaseloop-buffer-ingest",
//    "consumer":"buffer ingest"}
//
// (one line per entry). The default log is
// LostRecordsLogPath(DefaultStateDir()) (state_dir.h), shared by every
// component on the machine (appends from several processes never
// interleave; see files::AppendDurably). Read it with `jq`, or
// ReadLostRecordsLog.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kafka/consumer.h"
#include "common/kafka/state_dir.h"  // IWYU pragma: export

namespace phaseloop::kafka {

struct LostRecordsEntry {
  RecordsLost lost;
  std::string group;     // the consumer group that was owed the records
  std::string consumer;  // which component noticed ("buffer ingest", ...)
  int64_t time_ms = 0;   // when (ms since the Unix epoch, UTC)
};

// An entry for `lost`, stamped with the current time.
LostRecordsEntry MakeLostRecordsEntry(const RecordsLost& lost,
                                      absl::string_view group,
                                      absl::string_view consumer);

// The entry's JSON line (with its '\n').
std::string LostRecordsLine(const LostRecordsEntry& entry);

// Appends `entry` to the log at `path` (created with its directories).
// The error names the path.
absl::Status AppendLostRecords(const std::string& path,
                               const LostRecordsEntry& entry);

// Every entry of the log at `path`, oldest first (a torn last line, left by
// a crash mid-append, is skipped). NotFound when there is no log.
absl::StatusOr<std::vector<LostRecordsEntry>> ReadLostRecordsLog(
    const std::string& path);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_LOST_RECORDS_LOG_H_
