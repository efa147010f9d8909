#include "reward_engine/sli/sli_recorder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "reward_engine/sli/sli_window.h"

namespace phaseloop::sli {
namespace {

constexpr int64_t kLength = 1000;       // window length (ms) in most tests
constexpr int64_t kT0 = 1700000000000;  // a window start

SliRecorderOptions Options(int64_t length = kLength) {
  SliRecorderOptions options;
  options.service = "checkout";
  options.group = "canary";
  options.instance = "pod-1";
  options.deployment_id = "dep-1";
  options.policy_version = "pv-1";
  options.window_length_ms = length;
  return options;
}

std::unique_ptr<SliRecorder> MakeRecorder(SliRecorderOptions options) {
  auto recorder = SliRecorder::Create(std::move(options));
  EXPECT_TRUE(recorder.ok()) << recorder.status();
  return *std::move(recorder);
}

// Exact totals of one window, computed independently of the recorder.
struct Expected {
  int64_t count = 0;
  int64_t sum_ns = 0;
  int64_t errors = 0;
  int64_t min_ns = INT64_MAX;
  int64_t max_ns = 0;
};

// Record i of thread t: a deterministic latency and error flag.
int64_t LatencyNs(int t, int64_t i) {
  return 1000 * (1 + (i * 7919 + t) % 50000);
}
bool IsError(int t, int64_t i) { return (i + t) % 97 == 0; }

TEST(SliRecorderTest, FourThreadsCountsAndSumsExactNothingLostAtBoundaries) {
  auto recorder = MakeRecorder(Options());
  constexpr int kThreads = 4;
  constexpr int64_t kPerThread = 400000;
  constexpr int64_t kSpanMs = 12 * kLength;  // crosses 12 window boundaries
  // Each thread's event time advances monotonically (like a clock); after a
  // record it publishes its time. The closer closes windows that ended
  // before every thread's time, concurrently with the recording.
  std::atomic<int64_t> progress[kThreads];
  for (auto& p : progress) p = kT0;
  std::atomic<int> done{0};
  std::atomic<int64_t> closed_up_to{kT0};
  std::vector<v1::SliWindow> closed;
  std::thread closer([&] {
    while (done.load() < kThreads) {
      int64_t watermark = INT64_MAX;
      for (auto& p : progress) watermark = std::min(watermark, p.load());
      for (auto& w : recorder->CloseWindowsBefore(watermark)) {
        closed.push_back(std::move(w));
      }
      closed_up_to.store(watermark);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0; i < kPerThread; ++i) {
        const int64_t time = kT0 + i * kSpanMs / kPerThread;
        // A thread holds kSlots unclosed windows: stay within reach of the
        // closer (whose watermark waits for the slowest thread).
        while (time >= closed_up_to.load() + 2 * kLength) {
          std::this_thread::yield();
        }
        recorder->RecordNanosAt(time, LatencyNs(t, i), IsError(t, i));
        progress[t].store(time);
      }
      ++done;
    });
  }
  for (auto& thread : threads) thread.join();
  closer.join();
  for (auto& w : recorder->CloseAllWindows()) closed.push_back(std::move(w));

  std::map<int64_t, Expected> expected;
  for (int t = 0; t < kThreads; ++t) {
    for (int64_t i = 0; i < kPerThread; ++i) {
      const int64_t time = kT0 + i * kSpanMs / kPerThread;
      Expected& e = expected[time - time % kLength];
      const int64_t ns = LatencyNs(t, i);
      ++e.count;
      e.sum_ns += ns;
      e.errors += IsError(t, i);
      e.min_ns = std::min(e.min_ns, ns);
      e.max_ns = std::max(e.max_ns, ns);
    }
  }
  const SliRecorderStats stats = recorder->stats();
  EXPECT_EQ(stats.late_records, 0);
  EXPECT_EQ(stats.dropped_records, 0);
  EXPECT_EQ(stats.invalid_records, 0);
  ASSERT_EQ(closed.size(), expected.size());  // one window each, in order
  for (const v1::SliWindow& w : closed) {
    SCOPED_TRACE(w.window_start_ms());
    ASSERT_TRUE(expected.count(w.window_start_ms()));
    const Expected& e = expected[w.window_start_ms()];
    EXPECT_EQ(w.count(), e.count);
    EXPECT_EQ(w.error_count(), e.errors);
    EXPECT_EQ(w.has_error_sketch(), e.errors > 0);
    EXPECT_EQ(w.sum_seconds(), static_cast<double>(e.sum_ns) * 1e-9);
    EXPECT_EQ(w.min_seconds(), static_cast<double>(e.min_ns) * 1e-9);
    EXPECT_EQ(w.max_seconds(), static_cast<double>(e.max_ns) * 1e-9);
    EXPECT_EQ(w.window_length_ms(), kLength);
    EXPECT_EQ(w.service(), "checkout");
    EXPECT_TRUE(ValidateSliWindow(w).ok()) << ValidateSliWindow(w);
  }
  EXPECT_EQ(stats.windows_closed, static_cast<int64_t>(closed.size()));
}

TEST(SliRecorderTest, EagerCloserMakesLateRecordsButLosesNone) {
  auto recorder = MakeRecorder(Options());
  constexpr int kThreads = 4;
  constexpr int64_t kPerThread = 200000;
  std::atomic<int64_t> newest{kT0};
  std::atomic<int> done{0};
  int64_t in_windows = 0;
  std::thread closer([&] {
    while (done.load() < kThreads) {  // closes up to the newest record's time
      for (const auto& w : recorder->CloseWindowsBefore(newest.load())) {
        in_windows += w.count();
      }
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0; i < kPerThread; ++i) {
        // Threads run at different speeds through the same 20 windows.
        const int64_t time =
            kT0 + (i * (t + 1) % kPerThread) * 20 * kLength / kPerThread;
        recorder->RecordNanosAt(time, 1000, false);
        if (time > newest.load()) newest.store(time);
      }
      ++done;
    });
  }
  for (auto& thread : threads) thread.join();
  closer.join();
  for (const auto& w : recorder->CloseAllWindows()) in_windows += w.count();
  const SliRecorderStats stats = recorder->stats();
  EXPECT_GT(stats.late_records + stats.dropped_records, 0);
  EXPECT_EQ(in_windows + stats.late_records + stats.dropped_records,
            kThreads * kPerThread);
}

TEST(SliRecorderTest, WindowsAreByEventTimeAndSketchesMatch) {
  auto recorder = MakeRecorder(Options());
  LatencySketch first;
  LatencySketch first_failures;
  LatencySketch second;
  for (int i = 1; i <= 1000; ++i) {
    recorder->RecordNanosAt(kT0 + 999, int64_t{i} * 1000, i % 10 == 0);
    recorder->RecordNanosAt(kT0 + 1000, int64_t{i} * 2000, false);
    ASSERT_TRUE(first.Add(i * 1e-6).ok());
    if (i % 10 == 0) {
      ASSERT_TRUE(first_failures.Add(i * 1e-6).ok());
    }
    ASSERT_TRUE(second.Add(i * 2e-6).ok());
  }
  recorder->RecordNanosAt(kT0 + 500, 0, false);  // a zero latency
  ASSERT_TRUE(first.Add(0).ok());
  EXPECT_TRUE(recorder->CloseWindowsBefore(kT0 + 999).empty());  // still open
  std::vector<v1::SliWindow> windows = recorder->CloseWindowsBefore(kT0 + 1000);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].window_start_ms(), kT0);
  EXPECT_EQ(windows[0].count(), 1001);
  EXPECT_EQ(windows[0].error_count(), 100);
  EXPECT_EQ(windows[0].min_seconds(), 0);
  EXPECT_EQ(windows[0].sketch().SerializeAsString(),
            first.ToProto().SerializeAsString());
  // The failures' own sketch: which latencies failed.
  EXPECT_EQ(windows[0].error_sketch().SerializeAsString(),
            first_failures.ToProto().SerializeAsString());
  // Records for the closed window are late, the next one is still open.
  recorder->RecordNanosAt(kT0 + 10, 5000, false);
  EXPECT_EQ(recorder->stats().late_records, 1);
  windows = recorder->CloseWindowsBefore(kT0 + 2 * kLength);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].window_start_ms(), kT0 + kLength);
  EXPECT_EQ(windows[0].sketch().SerializeAsString(),
            second.ToProto().SerializeAsString());
  EXPECT_FALSE(windows[0].has_error_sketch());             // no failures
  EXPECT_TRUE(recorder->CloseWindowsBefore(kT0).empty());  // never goes back
  // The first window's slot again, kSlots windows on: its failures' buckets
  // were emptied when it closed.
  const int64_t again = kT0 + SliRecorder::kSlots * kLength;
  recorder->RecordNanosAt(again, 7000, true);
  recorder->RecordNanosAt(again, 9000, false);
  windows = recorder->CloseWindowsBefore(again + kLength);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].window_start_ms(), again);
  EXPECT_EQ(windows[0].error_count(), 1);
  LatencySketch one_failure;
  ASSERT_TRUE(one_failure.Add(7e-6).ok());
  EXPECT_EQ(windows[0].error_sketch().SerializeAsString(),
            one_failure.ToProto().SerializeAsString());
}

TEST(SliRecorderTest, InvalidAndOutOfRingRecordsAreCounted) {
  auto recorder = MakeRecorder(Options());
  recorder->RecordNanosAt(kT0, -1, false);
  recorder->RecordNanosAt(-5, 1000, false);
  recorder->RecordSeconds(std::nan(""), false);
  recorder->RecordSeconds(2e9, false);
  EXPECT_EQ(recorder->stats().invalid_records, 4);
  // Windows 0..3 of this thread are unclosed: window 4 has no slot.
  for (int w = 0; w < SliRecorder::kSlots + 1; ++w) {
    recorder->RecordNanosAt(kT0 + w * kLength, 1000, false);
  }
  EXPECT_EQ(recorder->stats().dropped_records, 1);
  EXPECT_EQ(recorder->CloseAllWindows().size(), 4u);
}

TEST(SliRecorderTest, CreateRejectsMissingIds) {
  SliRecorderOptions options = Options();
  options.deployment_id.clear();
  EXPECT_EQ(SliRecorder::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = Options(0);
  EXPECT_FALSE(SliRecorder::Create(options).ok());
}

// Collects published windows; fails the first `fail_first` calls.
class FakeSink : public SliSink {
 public:
  explicit FakeSink(int fail_first = 0) : fail_(fail_first) {}
  absl::Status Publish(const v1::SliWindow& window) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_ > 0) {
      --fail_;
      return absl::UnavailableError("broker down");
    }
    windows_.push_back(window);
    return absl::OkStatus();
  }
  std::vector<v1::SliWindow> windows() {
    std::lock_guard<std::mutex> lock(mu_);
    return windows_;
  }

 private:
  std::mutex mu_;
  int fail_;
  std::vector<v1::SliWindow> windows_;
};

TEST(SliRecorderTest, FlusherPublishesEveryRecordAcrossThreadsAndRetries) {
  SliRecorderOptions options = Options(/*length=*/100);
  options.grace_ms = 30;
  auto recorder = MakeRecorder(options);
  FakeSink sink(/*fail_first=*/1);
  ASSERT_TRUE(recorder->StartFlusher(&sink).ok());
  EXPECT_FALSE(recorder->StartFlusher(&sink).ok());
  std::atomic<int64_t> recorded{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {  // short-lived threads: shards are reused
    threads.emplace_back([&] {
      const auto end =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(450);
      while (std::chrono::steady_clock::now() < end) {
        recorder->RecordMicros(250, false);
        ++recorded;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::thread late_thread([&] {
    recorder->RecordSeconds(0.001, true);
    ++recorded;
  });
  late_thread.join();
  ASSERT_TRUE(recorder->StopFlusher().ok());
  const SliRecorderStats stats = recorder->stats();
  int64_t published = 0;
  int64_t previous_start = -1;
  for (const v1::SliWindow& w : sink.windows()) {
    EXPECT_TRUE(ValidateSliWindow(w).ok()) << ValidateSliWindow(w);
    EXPECT_GT(w.window_start_ms(), previous_start);  // in order, once each
    previous_start = w.window_start_ms();
    published += w.count();
  }
  EXPECT_GE(sink.windows().size(), 4u);
  EXPECT_EQ(published + stats.late_records + stats.dropped_records,
            recorded.load());
  EXPECT_EQ(stats.dropped_records, 0);
  EXPECT_EQ(stats.publish_failures, 1);
  EXPECT_EQ(stats.windows_dropped, 0);
  EXPECT_EQ(stats.windows_published,
            static_cast<int64_t>(sink.windows().size()));
}

}  // namespace
}  // namespace phaseloop::sli
