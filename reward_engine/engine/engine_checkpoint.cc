#include "reward_engine/engine/engine_checkpoint.h"

#include "absl/strings/str_cat.h"

namespace phaseloop::reward_engine {
namespace {

std::string ReadThroughTopic(const std::string& topic) {
  return absl::StrCat(topic, "#read_through");
}
std::string ClosedThroughTopic(const std::string& topic) {
  return absl::StrCat(topic, "#closed_through");
}

}  // namespace

std::vector<replay_buffer::ConsumerOffset> CheckpointOffsets(
    const std::string& group, const std::string& topic,
    const std::map<int32_t, PartitionCheckpoint>& checkpoints) {
  std::vector<replay_buffer::ConsumerOffset> offsets;
  for (const auto& [partition, checkpoint] : checkpoints) {
    const bool replaces = checkpoint.replaces_stored;
    offsets.push_back(
        {group, topic, partition, checkpoint.next_offset, replaces});
    offsets.push_back({group, ReadThroughTopic(topic), partition,
                       checkpoint.read_through, replaces});
    if (checkpoint.closed_through_ms != kNoTime) {
      offsets.push_back({group, ClosedThroughTopic(topic), partition,
                         checkpoint.closed_through_ms, replaces});
    } else if (replaces) {
      // The other log's closed_through says nothing of this one: no window
      // of it has closed (0 is before every event time).
      offsets.push_back({group, ClosedThroughTopic(topic), partition, 0, true});
    }
  }
  return offsets;
}

absl::StatusOr<std::map<int32_t, PartitionCheckpoint>> ReadCheckpoints(
    replay_buffer::ReplayStore& store, const std::string& group,
    const std::string& topic) {
  std::map<int32_t, PartitionCheckpoint> checkpoints;
  absl::StatusOr<std::vector<replay_buffer::ConsumerOffset>> next =
      store.ReadOffsets(group, topic);
  if (!next.ok()) return next.status();
  for (const replay_buffer::ConsumerOffset& o : *next) {
    PartitionCheckpoint& c = checkpoints[o.partition];
    c.next_offset = o.next_offset;
    c.read_through = o.next_offset;
  }
  absl::StatusOr<std::vector<replay_buffer::ConsumerOffset>> read =
      store.ReadOffsets(group, ReadThroughTopic(topic));
  if (!read.ok()) return read.status();
  for (const replay_buffer::ConsumerOffset& o : *read) {
    auto it = checkpoints.find(o.partition);
    if (it != checkpoints.end()) {
      it->second.read_through = std::max(it->second.next_offset, o.next_offset);
    }
  }
  absl::StatusOr<std::vector<replay_buffer::ConsumerOffset>> closed =
      store.ReadOffsets(group, ClosedThroughTopic(topic));
  if (!closed.ok()) return closed.status();
  for (const replay_buffer::ConsumerOffset& o : *closed) {
    auto it = checkpoints.find(o.partition);
    if (it != checkpoints.end()) it->second.closed_through_ms = o.next_offset;
  }
  return checkpoints;
}

}  // namespace phaseloop::reward_engine
