#include "reward_engine/engine/event_time_windows.h"

#include <algorithm>
#include <utility>

namespace phaseloop::reward_engine {
namespace {

// Start of the window holding event time `t` (floor division).
int64_t WindowStart(int64_t t, int64_t window_ms) {
  int64_t q = t / window_ms;
  if (t % window_ms != 0 && t < 0) --q;
  return q * window_ms;
}

}  // namespace

EventTimeWindows::EventTimeWindows(WindowOptions options) : options_(options) {}

void EventTimeWindows::Assign(int32_t partition,
                              std::optional<PartitionCheckpoint> restored,
                              int64_t now_ms) {
  PartitionState state;
  state.last_record_ms = now_ms;
  if (restored.has_value()) {
    state.restored_next = restored->next_offset;
    state.replay_until = restored->read_through;
    state.closed_floor_ms = restored->closed_through_ms;
  }
  partitions_[partition] = state;
}

void EventTimeWindows::Reset() {
  partitions_.clear();
  windows_.clear();
  // The watermark restarts with the partitions; closed windows stay closed
  // through the checkpoints' closed_through.
  watermark_ = kNoTime;
  applied_watermark_ = kNoTime;
}

EventTimeWindows::PartitionState& EventTimeWindows::StateOf(int32_t partition,
                                                            int64_t now_ms) {
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) {
    Assign(partition, std::nullopt, now_ms);
    it = partitions_.find(partition);
  }
  return it->second;
}

bool EventTimeWindows::Advance(PartitionState& state, int64_t offset,
                               int64_t now_ms) {
  state.position = std::max(state.position, offset + 1);
  state.last_record_ms = now_ms;
  return offset < state.replay_until;
}

bool EventTimeWindows::Skip(int32_t partition, int64_t offset, int64_t now_ms) {
  return !Advance(StateOf(partition, now_ms), offset, now_ms);
}

AddResult EventTimeWindows::Add(SliInput input, int64_t now_ms) {
  PartitionState& state = StateOf(input.partition, now_ms);
  AddResult result;
  result.replayed = Advance(state, input.offset, now_ms);
  const int64_t event_ms = input.sli_window_start_ms +
                           std::max<int64_t>(input.sli_window_length_ms, 1) - 1;
  state.max_event_ms = std::max(state.max_event_ms, event_ms);
  const int64_t start =
      WindowStart(input.sli_window_start_ms, options_.window_ms);
  const int64_t end = start + options_.window_ms;
  if (state.closed_floor_ms != kNoTime && end <= state.closed_floor_ms) {
    result.admission =
        result.replayed ? Admission::kReplayed : Admission::kLate;
    return result;
  }
  if (applied_watermark_ != kNoTime && end <= applied_watermark_) {
    result.admission = Admission::kLate;
    return result;
  }
  OpenWindow& window = windows_[{start, input.service}];
  if (!window.seen
           .emplace(input.group, input.instance, input.sli_window_start_ms)
           .second) {
    result.admission = Admission::kDuplicate;
    return result;
  }
  auto [group_it, created] =
      window.groups.try_emplace(GroupKey{input.group, input.deployment_id});
  GroupWindow& group = group_it->second;
  if (created) {
    group.group = input.group;
    group.deployment_id = input.deployment_id;
    group.policy_version = input.policy_version;
    group.sketch = std::move(input.sketch);
    group.error_sketch = std::move(input.error_sketch);
  } else if (group.policy_version != input.policy_version) {
    window.seen.erase({input.group, input.instance, input.sli_window_start_ms});
    result.admission = Admission::kConflict;
    return result;
  } else if (!group.sketch.Merge(input.sketch).ok() ||
             !group.error_sketch.Merge(input.error_sketch).ok()) {
    // Only a count overflow (2^62 requests) can fail here: treat as a
    // conflict rather than corrupting the window.
    window.seen.erase({input.group, input.instance, input.sli_window_start_ms});
    result.admission = Admission::kConflict;
    return result;
  }
  ++group.sli_windows;
  group.error_count += input.error_count;
  auto [offset_it, first] =
      window.min_offset.try_emplace(input.partition, input.offset);
  if (!first) offset_it->second = std::min(offset_it->second, input.offset);
  return result;
}

EndOffsetCheck EventTimeWindows::SetEndOffset(int32_t partition,
                                              int64_t end_offset) {
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) return EndOffsetCheck::kSameLog;
  PartitionState& state = it->second;
  state.end_offset = end_offset;
  // This log never held the offsets the checkpoint says were read: it is
  // another log (header, "A checkpoint describes one log").
  if (end_offset >= state.replay_until) return EndOffsetCheck::kSameLog;
  const bool placed_inside =
      state.restored_next > 0 && state.restored_next <= end_offset;
  state.restored_next = -1;
  state.replay_until = 0;
  state.closed_floor_ms = kNoTime;
  state.replaces_stored = true;
  if (placed_inside) {
    // What was read at the old offset is read again from the start (the
    // windows' duplicate check merges it once); until then its event
    // times must not move the watermark past the records below it.
    state.position = -1;
    state.max_event_ms = kNoTime;
  }
  return placed_inside ? EndOffsetCheck::kOtherLogMoveToStart
                       : EndOffsetCheck::kOtherLog;
}

bool EventTimeWindows::Idle(const PartitionState& state, int64_t now_ms) const {
  if (state.end_offset < 0) return false;
  const int64_t position = state.position >= 0
                               ? state.position
                               : std::max<int64_t>(state.restored_next, 0);
  return position >= state.end_offset &&
         now_ms - state.last_record_ms >= options_.idle_ms;
}

int64_t EventTimeWindows::Watermark(int64_t now_ms) {
  if (partitions_.empty()) return watermark_;
  int64_t active_min = std::numeric_limits<int64_t>::max();
  bool any_active = false;
  int64_t all_max = kNoTime;
  int64_t replay_cap = std::numeric_limits<int64_t>::max();
  for (const auto& [partition, state] : partitions_) {
    const int64_t mark = state.max_event_ms == kNoTime
                             ? kNoTime
                             : state.max_event_ms - options_.lateness_ms;
    all_max = std::max(all_max, mark);
    const int64_t position = state.position >= 0
                                 ? state.position
                                 : std::max<int64_t>(state.restored_next, 0);
    if (position < state.replay_until) {
      replay_cap = std::min(replay_cap, state.closed_floor_ms);
    }
    if (!Idle(state, now_ms)) {
      any_active = true;
      active_min = std::min(active_min, mark);
    }
  }
  int64_t mark = any_active ? active_min : all_max;
  mark = std::min(mark, replay_cap);
  watermark_ = std::max(watermark_, mark);
  return watermark_;
}

std::vector<ClosedWindow> EventTimeWindows::CloseReady(int64_t now_ms) {
  return CloseThrough(Watermark(now_ms));
}

bool EventTimeWindows::AllCaughtUp() const {
  for (const auto& [partition, state] : partitions_) {
    const int64_t position = state.position >= 0
                                 ? state.position
                                 : std::max<int64_t>(state.restored_next, 0);
    if (state.end_offset < 0 || position < state.end_offset ||
        position < state.replay_until) {
      return false;
    }
  }
  return true;
}

std::vector<ClosedWindow> EventTimeWindows::CloseDrained(
    int64_t now_ms, int64_t wall_clock_ms) {
  std::vector<ClosedWindow> closed = CloseReady(now_ms);
  if (partitions_.empty() || !AllCaughtUp()) return closed;
  int64_t newest_end = kNoTime;
  // windows_ is ordered by start, so by end as well.
  for (const auto& [key, window] : windows_) {
    const int64_t end = key.first + options_.window_ms;
    if (end > wall_clock_ms - options_.lateness_ms) break;
    newest_end = end;
  }
  if (newest_end == kNoTime) return closed;
  watermark_ = std::max(watermark_, newest_end);
  for (ClosedWindow& window : CloseThrough(watermark_)) {
    closed.push_back(std::move(window));
  }
  return closed;
}

std::vector<ClosedWindow> EventTimeWindows::CloseThrough(int64_t watermark) {
  std::vector<ClosedWindow> closed;
  if (watermark == kNoTime) return closed;
  applied_watermark_ = std::max(applied_watermark_, watermark);
  // windows_ is ordered by (start, service): close from the front.
  while (!windows_.empty()) {
    auto it = windows_.begin();
    const int64_t start = it->first.first;
    if (start + options_.window_ms > watermark) break;
    ClosedWindow window;
    window.service = it->first.second;
    window.window_start_ms = start;
    window.window_end_ms = start + options_.window_ms;
    for (auto& [key, group] : it->second.groups) {
      window.groups.push_back(std::move(group));
    }
    closed.push_back(std::move(window));
    windows_.erase(it);
  }
  return closed;
}

std::map<int32_t, PartitionCheckpoint> EventTimeWindows::Checkpoints() const {
  std::map<int32_t, int64_t> open_min;
  for (const auto& [key, window] : windows_) {
    for (const auto& [partition, offset] : window.min_offset) {
      auto [it, first] = open_min.try_emplace(partition, offset);
      if (!first) it->second = std::min(it->second, offset);
    }
  }
  std::map<int32_t, PartitionCheckpoint> checkpoints;
  for (const auto& [partition, state] : partitions_) {
    if (state.position < 0 && state.restored_next < 0) continue;
    const int64_t position =
        state.position >= 0 ? state.position : state.restored_next;
    PartitionCheckpoint checkpoint;
    checkpoint.next_offset = position;
    auto it = open_min.find(partition);
    if (it != open_min.end()) {
      checkpoint.next_offset = std::min(checkpoint.next_offset, it->second);
    }
    if (state.restored_next >= 0) {
      // Records below the restored next offset were all emitted before.
      checkpoint.next_offset =
          std::max(checkpoint.next_offset, state.restored_next);
    }
    checkpoint.read_through = std::max(position, state.replay_until);
    checkpoint.closed_through_ms =
        std::max(applied_watermark_, state.closed_floor_ms);
    checkpoint.replaces_stored = state.replaces_stored;
    checkpoints[partition] = checkpoint;
  }
  return checkpoints;
}

void EventTimeWindows::CheckpointsStored() {
  for (auto& [partition, state] : partitions_) {
    if (state.position >= 0 || state.restored_next >= 0) {
      state.replaces_stored = false;
    }
  }
}

std::map<int32_t, int64_t> EventTimeWindows::Lag() const {
  std::map<int32_t, int64_t> lag;
  for (const auto& [partition, state] : partitions_) {
    if (state.end_offset < 0) {
      lag[partition] = -1;
      continue;
    }
    const int64_t position = state.position >= 0
                                 ? state.position
                                 : std::max<int64_t>(state.restored_next, 0);
    lag[partition] = std::max<int64_t>(0, state.end_offset - position);
  }
  return lag;
}

}  // namespace phaseloop::reward_engine
