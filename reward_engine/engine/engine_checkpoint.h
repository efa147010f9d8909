#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_CHECKPOINT_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_CHECKPOINT_H_

// How the reward engine's per-partition checkpoints (event_time_windows.h,
// "Restart contract") live in the replay buffer: as consumer offsets, so
// they are written in the same transaction as the FinalRewards they cover
// and, like offsets, only ever move forward (but for a checkpoint that
// replaces another log's, PartitionCheckpoint::replaces_stored). For
// (group, topic, partition):
//   topic                      next_offset  (where the consumer resumes)
//   topic + "#read_through"    read_through
//   topic + "#closed_through"  closed_through_ms (absent before any close)
// Kafka topic names cannot contain '#', so these never collide with a real
// topic's offsets.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replay_buffer/replay_store.h"
#include "reward_engine/engine/event_time_windows.h"

namespace phaseloop::reward_engine {

std::vector<replay_buffer::ConsumerOffset> CheckpointOffsets(
    const std::string& group, const std::string& topic,
    const std::map<int32_t, PartitionCheckpoint>& checkpoints);

// Stored checkpoints of `group` on `topic`, by partition (partitions with a
// stored next offset only).
absl::StatusOr<std::map<int32_t, PartitionCheckpoint>> ReadCheckpoints(
    replay_buffer::ReplayStore& store, const std::string& group,
    const std::string& topic);

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_CHECKPOINT_H_
