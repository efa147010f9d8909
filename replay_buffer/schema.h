#ifndef PHASELOOP_REPLAY_BUFFER_SCHEMA_H_
#define PHASELOOP_REPLAY_BUFFER_SCHEMA_H_

// The replay buffer's SQLite schema and its forward-only migrations (private
// to replay_buffer/). The schema version is `PRAGMA user_version`; a
// phaseloop buffer also carries `PRAGMA application_id` = kApplicationId.
// Files written before versioning (version 0 with only the decisions table
// of the first DecisionStore) are adopted by migration 1.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "replay_buffer/replay_store.h"

struct sqlite3;

namespace phaseloop::replay_buffer::internal {

inline constexpr int32_t kSchemaVersion = 5;
inline constexpr int32_t kApplicationId = 0x50484c50;  // "PHLP"

// Table names in schema order (what BufferStats::table_rows lists).
inline constexpr const char* kTables[] = {
    "modules",         "episodes",         "steps",
    "best_sequences",  "final_rewards",    "deployments",
    "policy_versions", "decisions",        "consumer_offsets",
    "miscompiles",     "blocked_pipelines"};

// Opens the SQLite connection for `path`: checks the file is a phaseloop
// buffer at a version this build knows BEFORE writing anything, then (unless
// read-only) sets WAL, synchronous=FULL, foreign keys and a busy handler
// (waits up to 30 s for another writer, saying so on stderr after 1 s) and
// applies pending migrations in one transaction each. Errors name the path.
// The caller owns the returned connection (sqlite3_close).
absl::StatusOr<sqlite3*> OpenDatabase(const std::string& path,
                                      const OpenOptions& options);

}  // namespace phaseloop::replay_buffer::internal

#endif  // PHASELOOP_REPLAY_BUFFER_SCHEMA_H_
