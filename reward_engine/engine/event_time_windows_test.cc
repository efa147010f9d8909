#include "reward_engine/engine/event_time_windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace phaseloop::reward_engine {
namespace {

// A 1 ms SLI window at start_ms (event time start_ms) unless the caller sets
// sli_window_length_ms.
SliInput Record(int32_t partition, int64_t offset, const std::string& group,
                const std::string& instance, int64_t start_ms,
                std::vector<double> latencies, int64_t errors = 0,
                const std::string& policy = "p1") {
  SliInput input;
  input.partition = partition;
  input.offset = offset;
  input.service = "checkout";
  input.group = group;
  input.instance = instance;
  input.deployment_id = "d-" + group;
  input.policy_version = policy;
  input.sli_window_start_ms = start_ms;
  for (double v : latencies) EXPECT_TRUE(input.sketch.Add(v).ok());
  input.count = static_cast<int64_t>(latencies.size());
  input.error_count = errors;
  return input;
}

// "service/start/group/deployment: sli_windows count errors"
std::string Describe(const ClosedWindow& window, const GroupWindow& group) {
  return absl::StrCat(window.service, "/", window.window_start_ms, "/",
                      group.group, "/", group.deployment_id, ": ",
                      group.sli_windows, " ", group.sketch.count(), " ",
                      group.error_count, " ", group.policy_version);
}

std::vector<std::string> DescribeAll(const std::vector<ClosedWindow>& closed) {
  std::vector<std::string> out;
  for (const ClosedWindow& w : closed) {
    for (const GroupWindow& g : w.groups) out.push_back(Describe(w, g));
  }
  return out;
}

WindowOptions Options(int64_t window_ms, int64_t lateness_ms,
                      int64_t idle_ms = 1000) {
  WindowOptions options;
  options.window_ms = window_ms;
  options.lateness_ms = lateness_ms;
  options.idle_ms = idle_ms;
  return options;
}

// Event time is an SLI window's end: with 5 s SLI windows and 2 s of
// lateness, window [0, 10 s) closes on the first SLI window of the next one
// (it covers up to 15 s), not a whole SLI window later.
TEST(EventTimeWindowsTest, EventTimeIsTheSliWindowsEnd) {
  EventTimeWindows windows(Options(10000, 2000));
  windows.Assign(0, std::nullopt, 0);
  int64_t offset = 0;
  auto add = [&](const std::string& instance, int64_t start) {
    SliInput input = Record(0, offset++, "canary", instance, start, {0.01});
    input.sli_window_length_ms = 5000;
    return windows.Add(std::move(input), 0).admission;
  };
  EXPECT_EQ(add("a", 0), Admission::kAccepted);
  EXPECT_EQ(add("a", 5000), Admission::kAccepted);
  // Lateness covers the other instance's window ending at 10 s.
  EXPECT_EQ(windows.Watermark(0), 9999 - 2000);
  EXPECT_EQ(add("b", 5000), Admission::kAccepted);
  EXPECT_TRUE(windows.CloseReady(0).empty());
  EXPECT_EQ(add("a", 10000), Admission::kAccepted);
  EXPECT_EQ(windows.Watermark(0), 14999 - 2000);
  std::vector<ClosedWindow> closed = windows.CloseReady(0);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].window_end_ms, 10000);
  EXPECT_EQ(DescribeAll(closed),
            (std::vector<std::string>{"checkout/0/canary/d-canary: 3 3 0 p1"}));
}

TEST(EventTimeWindowsTest,
     MergesInstancesAndClosesWhenTheWatermarkPassesTheEnd) {
  EventTimeWindows windows(Options(10000, 0));
  windows.Assign(0, std::nullopt, 0);
  EXPECT_EQ(
      windows.Add(Record(0, 0, "canary", "a", 0, {0.01, 0.02}, 1), 0).admission,
      Admission::kAccepted);
  EXPECT_EQ(windows.Add(Record(0, 1, "canary", "b", 5000, {0.03}), 0).admission,
            Admission::kAccepted);
  EXPECT_EQ(
      windows.Add(Record(0, 2, "baseline", "c", 9000, {0.05}), 0).admission,
      Admission::kAccepted);
  EXPECT_TRUE(windows.CloseReady(0).empty());  // watermark 9000 < 10000
  EXPECT_EQ(windows.Watermark(0), 9000);
  windows.Add(Record(0, 3, "canary", "a", 10000, {0.04}), 0);
  std::vector<ClosedWindow> closed = windows.CloseReady(0);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].window_start_ms, 0);
  EXPECT_EQ(closed[0].window_end_ms, 10000);
  EXPECT_EQ(DescribeAll(closed), (std::vector<std::string>{
                                     "checkout/0/baseline/d-baseline: 1 1 0 p1",
                                     "checkout/0/canary/d-canary: 2 3 1 p1"}));
  EXPECT_EQ(closed[0].groups[1].sketch.max(), 0.03);
  // Only the record of the open window keeps the partition's offset back.
  EXPECT_EQ(windows.Checkpoints().at(0), (PartitionCheckpoint{3, 4, 10000}));
}

TEST(EventTimeWindowsTest, LatenessBoundDelaysClosing) {
  EventTimeWindows windows(Options(10000, 5000));
  windows.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  windows.Add(Record(0, 1, "canary", "a", 10000, {0.01}), 0);
  EXPECT_TRUE(windows.CloseReady(0).empty());  // 10000 - 5000 < 10000
  // Within the lateness bound: still merged.
  EXPECT_EQ(windows.Add(Record(0, 2, "canary", "b", 9000, {0.01}), 0).admission,
            Admission::kAccepted);
  windows.Add(Record(0, 3, "canary", "a", 15000, {0.01}), 0);
  std::vector<ClosedWindow> closed = windows.CloseReady(0);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].groups[0].sli_windows, 2);
  // After closing, a record of that window is late and not merged.
  EXPECT_EQ(windows.Add(Record(0, 4, "canary", "c", 0, {0.01}), 0).admission,
            Admission::kLate);
  windows.Add(Record(0, 5, "canary", "a", 25000, {0.01}), 0);
  closed = windows.CloseReady(0);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].window_start_ms, 10000);
  EXPECT_EQ(closed[0].groups[0].sli_windows, 2);
}

TEST(EventTimeWindowsTest, WatermarkIsTheMinimumOverPartitions) {
  EventTimeWindows windows(Options(10000, 0, 1000));
  windows.Assign(0, std::nullopt, 0);
  windows.Assign(1, std::nullopt, 0);
  windows.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  windows.Add(Record(0, 1, "canary", "a", 30000, {0.01}), 0);
  // Partition 1 has read nothing and is not known to be empty: no watermark.
  EXPECT_TRUE(windows.CloseReady(100000).empty());
  EXPECT_EQ(windows.Watermark(100000), kNoTime);
  windows.Add(Record(1, 0, "baseline", "b", 0, {0.02}), 100000);
  windows.Add(Record(1, 1, "baseline", "b", 10000, {0.02}), 100000);
  std::vector<ClosedWindow> closed = windows.CloseReady(100000);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].groups.size(), 2u);  // both groups close together
  EXPECT_EQ(windows.Watermark(100000), 10000);
}

TEST(EventTimeWindowsTest, QuietPartitionIsExcludedOnlyOnceCaughtUp) {
  EventTimeWindows windows(Options(10000, 0, 1000));
  windows.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  windows.Add(Record(1, 0, "baseline", "b", 0, {0.01}), 0);
  windows.Add(Record(0, 1, "canary", "a", 20000, {0.01}), 500);
  // Partition 1 is quiet but its end offset is unknown (or beyond its
  // position): it holds the watermark back however long it is quiet.
  EXPECT_TRUE(windows.CloseReady(60000).empty());
  windows.SetEndOffset(1, 5);
  EXPECT_TRUE(windows.CloseReady(60000).empty());
  // Caught up and quiet for idle_ms: excluded, partition 0 alone rules.
  windows.SetEndOffset(1, 1);
  windows.SetEndOffset(0, 2);
  std::vector<ClosedWindow> closed = windows.CloseReady(1200);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].groups.size(), 2u);
  // A new record in partition 1 makes it active again; the watermark does
  // not go back, and a record behind it is late.
  EXPECT_EQ(
      windows.Add(Record(1, 1, "baseline", "b", 5000, {0.01}), 1300).admission,
      Admission::kLate);
  EXPECT_EQ(windows.Watermark(1300), 20000);
}

TEST(EventTimeWindowsTest, AllPartitionsIdleTakesTheLargestWatermark) {
  EventTimeWindows windows(Options(10000, 0, 1000));
  windows.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  windows.Add(Record(1, 0, "baseline", "b", 10000, {0.01}), 0);
  windows.Add(Record(0, 1, "canary", "a", 30000, {0.01}), 0);
  windows.SetEndOffset(0, 2);
  windows.SetEndOffset(1, 1);
  EXPECT_EQ(windows.Watermark(999), 10000);  // not idle yet: min
  std::vector<ClosedWindow> closed = windows.CloseReady(1000);
  EXPECT_EQ(windows.Watermark(1000), 30000);
  ASSERT_EQ(closed.size(), 2u);           // [0,10000) and [10000,20000)
  EXPECT_EQ(windows.open_windows(), 1u);  // [30000, 40000) waits for data
}

// `rewards run --exit-when-idle-ms`: at the end of a drained stream, windows
// whose end is lateness behind the wall clock close; later ones wait.
TEST(EventTimeWindowsTest, DrainedInputClosesTheWindowsTheWallClockHasPassed) {
  EventTimeWindows windows(Options(10000, 5000, 30000));
  windows.Assign(0, std::nullopt, 0);
  windows.Assign(1, std::nullopt, 0);  // no records: holds the watermark
  windows.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  windows.Add(Record(0, 1, "baseline", "b", 10000, {0.02}), 0);
  windows.Add(Record(0, 2, "canary", "a", 20000, {0.03}), 0);
  windows.SetEndOffset(0, 3);
  windows.SetEndOffset(1, 0);
  // Not idle for idle_ms yet: no watermark, nothing closes on its own.
  EXPECT_TRUE(windows.CloseReady(100).empty());
  // Wall clock 31000: [0,10000) and [10000,20000) ended >= 5000 ms ago,
  // [20000,30000) only 1000 ms ago.
  std::vector<ClosedWindow> closed = windows.CloseDrained(100, 31000);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].window_start_ms, 0);
  EXPECT_EQ(closed[1].window_start_ms, 10000);
  EXPECT_EQ(windows.open_windows(), 1u);
  EXPECT_EQ(windows.Watermark(100), 20000);
  // The checkpoint covers what closed: a restart resumes at the open
  // window's record and knows everything ending by 20000 was emitted.
  EXPECT_EQ(windows.Checkpoints().at(0), (PartitionCheckpoint{2, 3, 20000}));
  // A record of a closed window read now is late, not merged.
  EXPECT_EQ(
      windows.Add(Record(1, 0, "canary", "c", 15000, {0.01}), 100).admission,
      Admission::kLate);
}

TEST(EventTimeWindowsTest, DrainedCloseWaitsForPartitionsNotCaughtUp) {
  EventTimeWindows windows(Options(10000, 0, 30000));
  windows.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  windows.Add(Record(1, 0, "baseline", "b", 0, {0.02}), 0);
  windows.SetEndOffset(0, 1);
  // Partition 1 holds records not read yet (end 4, position 1): its
  // windows may still grow, so the wall clock closes nothing.
  windows.SetEndOffset(1, 4);
  EXPECT_TRUE(windows.CloseDrained(100, 1000000).empty());
  // An end offset not known yet counts as not caught up as well.
  EventTimeWindows unknown(Options(10000, 0, 30000));
  unknown.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  EXPECT_TRUE(unknown.CloseDrained(100, 1000000).empty());
  windows.SetEndOffset(1, 1);
  EXPECT_EQ(windows.CloseDrained(100, 1000000).size(), 1u);
}

TEST(EventTimeWindowsTest, DuplicatesAndConflictsAreNotMerged) {
  EventTimeWindows windows(Options(10000, 0));
  EXPECT_EQ(windows.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0).admission,
            Admission::kAccepted);
  EXPECT_EQ(windows.Add(Record(0, 1, "canary", "a", 0, {0.01}), 0).admission,
            Admission::kDuplicate);
  // Another SLI window of the same instance is not a duplicate.
  EXPECT_EQ(windows.Add(Record(0, 2, "canary", "a", 1000, {0.01}), 0).admission,
            Admission::kAccepted);
  EXPECT_EQ(
      windows.Add(Record(0, 3, "canary", "b", 0, {0.01}, 0, "p2"), 0).admission,
      Admission::kConflict);
  // The conflicting record did not consume the instance's slot.
  EXPECT_EQ(windows.Add(Record(0, 4, "canary", "b", 0, {0.01}), 0).admission,
            Admission::kAccepted);
  windows.Add(Record(0, 5, "canary", "a", 10000, {0.01}), 0);
  std::vector<ClosedWindow> closed = windows.CloseReady(0);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].groups[0].sli_windows, 3);
  EXPECT_EQ(closed[0].groups[0].sketch.count(), 3);
}

// --- Restart: a crash anywhere, then a restart from the stored checkpoint,
// gives the same latest output per window as an uninterrupted run. ---

struct Input {
  std::vector<std::vector<SliInput>> partitions;  // in offset order
  std::vector<std::pair<int32_t, size_t>> order;  // (partition, index)
};

// Two partitions (canary, baseline), 3 instances each, 1 s SLI windows,
// 3 s engine windows, records up to 800 ms out of order within a partition.
Input MakeInput(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Input input;
  input.partitions.resize(2);
  const char* groups[] = {"canary", "baseline"};
  for (int32_t p = 0; p < 2; ++p) {
    std::vector<std::pair<int64_t, std::string>> events;
    for (int64_t t = 0; t < 20000; t += 1000) {
      for (const char* instance : {"i1", "i2", "i3"}) {
        events.push_back({t, instance});
      }
    }
    // Swap neighbours now and then: out of order by at most one SLI window.
    for (size_t i = 1; i < events.size(); ++i) {
      if (rng() % 4 == 0) std::swap(events[i - 1], events[i]);
    }
    for (size_t i = 0; i < events.size(); ++i) {
      std::vector<double> latencies;
      for (int k = 0; k < 1 + static_cast<int>(rng() % 5); ++k) {
        latencies.push_back(0.001 * static_cast<double>(1 + rng() % 100));
      }
      input.partitions[p].push_back(
          Record(p, static_cast<int64_t>(i), groups[p], events[i].second,
                 events[i].first, latencies, static_cast<int64_t>(rng() % 2)));
    }
  }
  // Interleave the partitions randomly.
  size_t next[2] = {0, 0};
  while (next[0] < input.partitions[0].size() ||
         next[1] < input.partitions[1].size()) {
    int32_t p = static_cast<int32_t>(rng() % 2);
    if (next[p] == input.partitions[p].size()) p = 1 - p;
    input.order.push_back({p, next[p]++});
  }
  return input;
}

using Latest = std::map<std::string, std::string>;  // window key -> content

void Emit(const std::vector<ClosedWindow>& closed, Latest* out) {
  for (const ClosedWindow& w : closed) {
    for (const GroupWindow& g : w.groups) {
      (*out)[absl::StrCat(w.window_start_ms, "/", g.group)] = Describe(w, g);
    }
  }
}

WindowOptions RestartOptions() { return Options(3000, 1000, 1000); }

Latest Uninterrupted(const Input& input) {
  EventTimeWindows windows(RestartOptions());
  Latest out;
  for (auto [p, i] : input.order) {
    windows.Add(input.partitions[p][i], 0);
    Emit(windows.CloseReady(0), &out);
  }
  return out;
}

TEST(EventTimeWindowsTest, RestartFromAnyCheckpointRebuildsTheSameWindows) {
  const Input input = MakeInput(42);
  const Latest expected = Uninterrupted(input);
  ASSERT_GE(expected.size(), 10u);
  const size_t n = input.order.size();
  for (size_t commit_at = 0; commit_at < n; commit_at += 7) {
    for (size_t crash_at : {commit_at, std::min(n - 1, commit_at + 5),
                            std::min(n - 1, commit_at + 40)}) {
      // Run 1: processes up to crash_at; the checkpoint (and the windows
      // closed with it) was stored at commit_at. Everything emitted reached
      // "Kafka"; only what was committed reached "the buffer".
      EventTimeWindows first(RestartOptions());
      Latest kafka, buffer;
      std::map<int32_t, PartitionCheckpoint> stored;
      for (size_t k = 0; k <= crash_at; ++k) {
        auto [p, i] = input.order[k];
        first.Add(input.partitions[p][i], 0);
        std::vector<ClosedWindow> closed = first.CloseReady(0);
        Emit(closed, &kafka);
        if (k <= commit_at) {
          Emit(closed, &buffer);
          if (k == commit_at) stored = first.Checkpoints();
        }
      }
      // Run 2: restart from the stored checkpoints, reading each partition
      // from its next_offset, interleaved as before.
      EventTimeWindows second(RestartOptions());
      for (int32_t p = 0; p < 2; ++p) {
        auto it = stored.find(p);
        second.Assign(p,
                      it == stored.end()
                          ? std::nullopt
                          : std::optional<PartitionCheckpoint>(it->second),
                      0);
      }
      int late = 0;
      for (auto [p, i] : input.order) {
        auto it = stored.find(p);
        if (it != stored.end() &&
            static_cast<int64_t>(i) < it->second.next_offset) {
          continue;
        }
        AddResult added = second.Add(input.partitions[p][i], 0);
        if (added.admission == Admission::kLate) ++late;
        std::vector<ClosedWindow> closed = second.CloseReady(0);
        Emit(closed, &kafka);
        Emit(closed, &buffer);
      }
      EXPECT_EQ(late, 0) << "commit " << commit_at << " crash " << crash_at;
      EXPECT_EQ(kafka, expected)
          << "commit " << commit_at << " crash " << crash_at;
      EXPECT_EQ(buffer, expected)
          << "commit " << commit_at << " crash " << crash_at;
    }
  }
}

TEST(EventTimeWindowsTest, ReplayedRecordsOfClosedWindowsAreIgnoredNotLate) {
  EventTimeWindows first(Options(10000, 0));
  first.Add(Record(0, 0, "canary", "a", 0, {0.01}), 0);
  first.Add(Record(0, 1, "canary", "a", 10000, {0.01}), 0);
  // Closes [0, 10000) and is committed with its checkpoint.
  ASSERT_EQ(first.CloseReady(0).size(), 1u);
  // Same partition: a record of the closed window after one of an open one
  // (late in this run).
  EXPECT_EQ(first.Add(Record(0, 2, "canary", "b", 0, {0.01}), 0).admission,
            Admission::kLate);
  const PartitionCheckpoint checkpoint = first.Checkpoints().at(0);
  EXPECT_EQ(checkpoint, (PartitionCheckpoint{1, 3, 10000}));

  EventTimeWindows second(Options(10000, 0));
  second.Assign(0, checkpoint, 0);
  AddResult open = second.Add(Record(0, 1, "canary", "a", 10000, {0.01}), 0);
  EXPECT_EQ(open.admission, Admission::kAccepted);
  EXPECT_TRUE(open.replayed);
  AddResult closed = second.Add(Record(0, 2, "canary", "b", 0, {0.01}), 0);
  EXPECT_EQ(closed.admission, Admission::kReplayed);
  EXPECT_FALSE(second.Skip(0, 2, 0));  // e.g. a dead letter: not again
  // New input behind the restored watermark is late.
  AddResult late = second.Add(Record(0, 3, "canary", "c", 0, {0.01}), 0);
  EXPECT_EQ(late.admission, Admission::kLate);
  EXPECT_FALSE(late.replayed);
  EXPECT_TRUE(second.Skip(0, 4, 0));
}

TEST(EventTimeWindowsTest, WatermarkWaitsForReplayToFinish) {
  // At the checkpoint, window [10000, 20000) was open and held a record far
  // out of order (offset 3). After the restart, partition 1 (not replaying)
  // races ahead; the window must not close before offset 3 is back.
  EventTimeWindows second(Options(10000, 0, 1000));
  second.Assign(0, PartitionCheckpoint{2, 4, 10000}, 0);
  second.Assign(1, PartitionCheckpoint{9, 9, 10000}, 0);
  second.Add(Record(0, 2, "canary", "a", 40000, {0.01}), 0);
  second.Add(Record(1, 9, "baseline", "b", 50000, {0.01}), 0);
  EXPECT_TRUE(second.CloseReady(0).empty());
  EXPECT_EQ(second.Watermark(0), 10000);
  EXPECT_EQ(second.Add(Record(0, 3, "canary", "a", 15000, {0.02}), 0).admission,
            Admission::kAccepted);
  std::vector<ClosedWindow> closed = second.CloseReady(0);
  ASSERT_FALSE(closed.empty());
  EXPECT_EQ(closed[0].window_start_ms, 10000);
  EXPECT_EQ(closed[0].groups[0].sketch.max(), 0.02);
}

// The stored checkpoint outlived its log: a new cluster (`canary run`'s
// embedded one keeps nothing) under the same group and buffer. Its offsets
// start at 0 again, below the checkpoint's read_through: the partition is
// new input, its windows close on their own data — not once this log has
// grown past the old read_through (a resumed canary step got no window for
// its whole duration).
TEST(EventTimeWindowsTest, CheckpointOfAnotherLogIsForgotten) {
  EventTimeWindows windows(Options(10000, 0, 1000));
  windows.Assign(0, PartitionCheckpoint{101, 107, 50000}, 0);
  // Read from offset 0 (the consumer, placed past the end, starts at the
  // earliest record) before the end offset is known: held back.
  windows.Add(Record(0, 0, "canary", "a", 60000, {0.01}), 0);
  windows.Add(Record(0, 1, "baseline", "b", 60000, {0.02}), 0);
  windows.Add(Record(0, 2, "canary", "a", 70000, {0.01}), 0);
  EXPECT_TRUE(windows.CloseReady(0).empty());
  EXPECT_EQ(windows.Watermark(0), 50000);
  // The log ends at 3 < 107: not the checkpoint's log.
  EXPECT_EQ(windows.SetEndOffset(0, 107), EndOffsetCheck::kSameLog);
  EXPECT_EQ(windows.SetEndOffset(0, 3), EndOffsetCheck::kOtherLog);
  EXPECT_EQ(windows.SetEndOffset(0, 3), EndOffsetCheck::kSameLog);  // once
  std::vector<ClosedWindow> closed = windows.CloseReady(0);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].window_start_ms, 60000);
  EXPECT_EQ(closed[0].groups.size(), 2u);
  // Offsets below the old read_through are new input (a late record is
  // sent to the late topic, not taken for one already sent), and the
  // checkpoint is this log's.
  AddResult late = windows.Add(Record(0, 3, "canary", "c", 40000, {0.01}), 0);
  EXPECT_EQ(late.admission, Admission::kLate);
  EXPECT_FALSE(late.replayed);
  // It replaces the stored one, lower as it is, until it has been stored.
  EXPECT_EQ(windows.Checkpoints().at(0),
            (PartitionCheckpoint{2, 4, 70000, /*replaces_stored=*/true}));
  windows.CheckpointsStored();
  EXPECT_EQ(windows.Checkpoints().at(0), (PartitionCheckpoint{2, 4, 70000}));
}

// The consumer placed at an old next offset the new log also has (end 104:
// at or past 101, below the old read_through 107) read from there: the
// records below were never read, so it must be moved to the start.
TEST(EventTimeWindowsTest, ACheckpointInsideAnotherLogAsksForTheLogsStart) {
  EventTimeWindows windows(Options(10000, 0, 1000));
  windows.Assign(0, PartitionCheckpoint{101, 107, 50000}, 0);
  EXPECT_EQ(windows.SetEndOffset(0, 104), EndOffsetCheck::kOtherLogMoveToStart);
  windows.Assign(1, PartitionCheckpoint{0, 107, 50000}, 0);
  EXPECT_EQ(windows.SetEndOffset(1, 104), EndOffsetCheck::kOtherLog);
}

// The engine's order (reward_engine.cc): a record polled at the old
// position is admitted before the end offset that shows the checkpoint is
// another log's. The reset forgets its event time, so the records read
// from the log's start afterwards are not late, and the record, read again
// there, is merged once.
TEST(EventTimeWindowsTest, ARecordReadAtTheOldPositionIsForgottenByTheReset) {
  EventTimeWindows windows(Options(10000, 0, 1000));
  windows.Assign(0, PartitionCheckpoint{4, 8, 20000}, 0);
  // Offsets 0..3: window 100000; 4: window 110000 (this log ends at 5).
  EXPECT_EQ(
      windows.Add(Record(0, 4, "canary", "a", 110000, {0.02}), 0).admission,
      Admission::kAccepted);
  EXPECT_EQ(windows.CloseReady(0).size(), 0u);  // capped at 20000
  ASSERT_EQ(windows.SetEndOffset(0, 5), EndOffsetCheck::kOtherLogMoveToStart);
  for (int64_t offset = 0; offset < 4; ++offset) {
    EXPECT_EQ(windows
                  .Add(Record(0, offset, "canary", absl::StrCat("i", offset),
                              100000, {0.01}),
                       0)
                  .admission,
              Admission::kAccepted)
        << offset;
  }
  EXPECT_EQ(
      windows.Add(Record(0, 4, "canary", "a", 110000, {0.02}), 0).admission,
      Admission::kDuplicate);
  EXPECT_EQ(
      DescribeAll(windows.CloseReady(0)),
      std::vector<std::string>{"checkout/100000/canary/d-canary: 4 4 0 p1"});
  // The log grows: window 110000 closes with offset 4 merged once.
  windows.Add(Record(0, 5, "canary", "a", 120000, {0.03}), 0);
  EXPECT_EQ(
      DescribeAll(windows.CloseReady(0)),
      std::vector<std::string>{"checkout/110000/canary/d-canary: 1 1 0 p1"});
}

// Why the engine admits first: the same record admitted after the reset
// counts as the first one read from the log's start, its event time moves
// the watermark, and every record below it is late (the CI failure of
// reward_engine_test's ACheckpointInsideARecreatedLogReadsItFromItsStart).
TEST(EventTimeWindowsTest, ARecordAdmittedAfterTheResetTurnsTheLogsStartLate) {
  EventTimeWindows windows(Options(10000, 0, 1000));
  windows.Assign(0, PartitionCheckpoint{4, 8, 20000}, 0);
  ASSERT_EQ(windows.SetEndOffset(0, 5), EndOffsetCheck::kOtherLogMoveToStart);
  EXPECT_EQ(
      windows.Add(Record(0, 4, "canary", "a", 110000, {0.02}), 0).admission,
      Admission::kAccepted);
  EXPECT_EQ(windows.CloseReady(0).size(), 0u);  // watermark 110000
  EXPECT_EQ(
      windows.Add(Record(0, 0, "canary", "i0", 100000, {0.01}), 0).admission,
      Admission::kLate);
}

TEST(EventTimeWindowsTest, CheckpointKeepsOffsetsOfOpenWindowsPerPartition) {
  EventTimeWindows windows(Options(10000, 0));
  windows.Add(Record(0, 5, "canary", "a", 0, {0.01}), 0);
  windows.Add(Record(1, 7, "baseline", "a", 0, {0.01}), 0);
  windows.Add(Record(0, 6, "canary", "a", 10000, {0.01}), 0);
  windows.Add(Record(1, 8, "baseline", "a", 10000, {0.01}), 0);
  windows.Add(Record(0, 7, "canary", "b", 20000, {0.01}), 0);
  std::map<int32_t, PartitionCheckpoint> before = windows.Checkpoints();
  EXPECT_EQ(before.at(0), (PartitionCheckpoint{5, 8, kNoTime}));
  EXPECT_EQ(before.at(1), (PartitionCheckpoint{7, 9, kNoTime}));
  ASSERT_EQ(windows.CloseReady(0).size(), 1u);  // watermark 10000
  std::map<int32_t, PartitionCheckpoint> after = windows.Checkpoints();
  EXPECT_EQ(after.at(0), (PartitionCheckpoint{6, 8, 10000}));
  EXPECT_EQ(after.at(1), (PartitionCheckpoint{8, 9, 10000}));
  EXPECT_EQ(windows.Lag().at(0), -1);
  windows.SetEndOffset(0, 10);
  EXPECT_EQ(windows.Lag().at(0), 2);
}

}  // namespace
}  // namespace phaseloop::reward_engine
