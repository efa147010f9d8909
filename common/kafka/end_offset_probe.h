#ifndef PHASELOOP_COMMON_KAFKA_END_OFFSET_PROBE_H_
#define PHASELOOP_COMMON_KAFKA_END_OFFSET_PROBE_H_

// Watches the end offsets (high watermarks) of a topic's partitions from a
// background thread, for the engine's consumer lag and idle detection. It
// uses its own librdkafka handle (no group, reads nothing), so a slow or
// failing query never blocks the consumer. A partition's last known end is
// kept through failures (it only grows).
//
// Thread-safety: every method may be called from any thread.

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

 private:
  EndOffsetProbe() = default;
  void Run();

  rd_kafka_t* handle_ = nullptr;  // owned
  std::string topic_;
  std::chrono::milliseconds interval_{1000};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;                // guarded by mu_
  std::set<int32_t> watched_;        // guarded by mu_
  std::map<int32_t, int64_t> ends_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_END_OFFSET_PROBE_H_
