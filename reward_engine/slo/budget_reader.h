#ifndef PHASELOOP_REWARD_ENGINE_SLO_BUDGET_READER_H_
#define PHASELOOP_REWARD_ENGINE_SLO_BUDGET_READER_H_

// Reads the budget topic once, from the beginning to the high watermark of
// every partition as of the start, without joining a consumer group (it
// assigns the partitions itself and commits nothing), and keeps the latest
// BudgetStatus per (service, slo_name, group). What `phaseloop slo status`
// shows.
//
// "Latest" is the last record in its partition (one key's records share a
// partition, in order); should the same triple appear in two partitions
// (the topic was re-partitioned), the larger as_of_ms wins.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/slo.pb.h"

namespace phaseloop::slo {

struct BudgetSnapshot {
  // Sorted by service, slo_name, group.
  std::vector<v1::BudgetStatus> latest;
  int64_t records = 0;    // read
  int64_t malformed = 0;  // not a BudgetStatus (skipped)
  bool topic_exists = true;
};

// Errors: Unavailable when the cluster cannot be reached (naming the
// bootstrap servers), DeadlineExceeded when the records up to the high
// watermarks did not all arrive within `timeout`.
absl::StatusOr<BudgetSnapshot> ReadLatestBudgets(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds timeout);

// Whether a record parsed from the topic is a budget status the reward
// engine wrote: protobuf parses most other records too (an SLI window reads
// as a status of its service with nonsense in every other field).
bool IsBudgetStatus(const v1::BudgetStatus& status);

// Records were read and none was a budget status: the wrong --topic.
bool OnlyOtherRecords(const BudgetSnapshot& snapshot);

// What was skipped ("" when nothing was), and for OnlyOtherRecords the fix.
std::string SkippedRecordsNote(const BudgetSnapshot& snapshot,
                               const std::string& topic);

}  // namespace phaseloop::slo

#endif  // PHASELOOP_REWARD_ENGINE_SLO_BUDGET_READER_H_
