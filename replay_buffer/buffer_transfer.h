#ifndef PHASELOOP_REPLAY_BUFFER_BUFFER_TRANSFER_H_
#define PHASELOOP_REPLAY_BUFFER_BUFFER_TRANSFER_H_

// Moving a replay buffer between machines.
//
// The export format is a replay buffer itself: a consistent SQLite snapshot
// (the online backup API, one read transaction, so writers may keep
// writing) in rollback-journal mode, a single self-contained file created
// atomically. It can be opened like any buffer (`phaseloop buffer stats
// --buffer FILE`) and carries its schema version.
//
// Import merges a buffer file into another through the ReplayStore contract:
// every record is upserted by its id, in transactions of a few hundred
// records, so importing twice changes nothing and an interrupted import is
// completed by running it again. Consumer offsets are not imported (they
// belong to the source's Kafka cluster), nor are learner-set priorities.

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::replay_buffer {

// Snapshots the buffer at `buffer_path` to the new file `out_path`.
absl::Status ExportBuffer(const std::string& buffer_path,
                          const std::string& out_path);

// Upserts every record of the buffer file `in_path` into `destination`;
// returns how many records it read. The input is opened read-only and must
// be at the current schema version (older: open it once for writing).
// When `*stop` becomes true it stops between transactions: Cancelled,
// saying how many records were stored (each whole).
absl::StatusOr<int64_t> ImportBuffer(const std::string& in_path,
                                     ReplayStore& destination,
                                     const std::atomic<bool>* stop = nullptr);

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_BUFFER_TRANSFER_H_
