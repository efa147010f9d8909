#ifndef PHASELOOP_COMMON_KAFKA_END_OFFSET_PROBE_H_
#define PHASELOOP_COMMON_KAFKA_END_OFFSET_PROBE_H_

// Watches the end offsets (high watermarks) of a topic's partitions from a
// background thread, for the engine's consumer lag and idle detection. It
// uses its own librdkafka handle (no group, reads nothing), so a slow or
// failing query never blocks the consumer. A partition's last known end is
// kept through failures (it only grows).
//
// Thread-safety: every method may be called from any thread.
//
// librdkafka 2.0 (Debian's) can hang in rd_kafka_query_watermark_offsets
// for ever once the broker is gone, whatever its timeout (fixed in 2.3.0,
// librdkafka#4460): the destructor waits a few seconds for the thread, then
// leaves it (detached, holding the state and the handle it uses) rather
// than hang the process that is shutting down (`rewards run` ignored
// SIGTERM after its broker died).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

typedef struct rd_kafka_s rd_kafka_t;

namespace phaseloop::kafka {

class EndOffsetProbe {
 public:
  // Starts polling every `interval`. InvalidArgument for a bad bootstrap.
  static absl::StatusOr<std::unique_ptr<EndOffsetProbe>> Start(
      const std::string& bootstrap, const std::string& topic,
      std::chrono::milliseconds interval);
  ~EndOffsetProbe();  // stops and joins the thread
  EndOffsetProbe(const EndOffsetProbe&) = delete;
  EndOffsetProbe& operator=(const EndOffsetProbe&) = delete;

  // The partitions to watch (the consumer's assignment).
  void Watch(const std::set<int32_t>& partitions);
  // Last known end offset per watched partition (absent: not known yet).
  std::map<int32_t, int64_t> EndOffsets() const;

  // How long the destructor waits for the thread before leaving it.
  static constexpr std::chrono::seconds kStopWait{5};

 private:
  // What the thread uses: shared, so that a thread left behind by the
  // destructor still has it.
  struct State {
    ~State();
    rd_kafka_t* handle = nullptr;  // owned
    std::string topic;
    std::chrono::milliseconds interval{1000};
    std::mutex mu;
    std::condition_variable wake;
    bool stop = false;                // guarded by mu
    bool finished = false;            // guarded by mu: Run returned
    std::set<int32_t> watched;        // guarded by mu
    std::map<int32_t, int64_t> ends;  // guarded by mu
  };

  EndOffsetProbe() = default;
  static void Run(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_END_OFFSET_PROBE_H_
