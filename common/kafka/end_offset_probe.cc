#include "common/kafka/end_offset_probe.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace phaseloop::kafka {

absl::StatusOr<std::unique_ptr<EndOffsetProbe>> EndOffsetProbe::Start(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds interval) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"bootstrap.servers", bootstrap},
        {"client.id", "phaseloop-rewards-lag"},
        {"log_level", "3"}}) {
    if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof(error)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(
          absl::StrCat("lag probe: ", name, ": ", error));
    }
  }
  rd_kafka_t* handle =
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
  if (handle == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(absl::StrCat("lag probe: ", error));
  }
  std::unique_ptr<EndOffsetProbe> probe(new EndOffsetProbe());
  probe->state_ = std::make_shared<State>();
  probe->state_->handle = handle;
  probe->state_->topic = topic;
  probe->state_->interval = interval;
  probe->thread_ = std::thread([state = probe->state_] { Run(state); });
  return probe;
}

EndOffsetProbe::State::~State() {
  if (handle != nullptr) rd_kafka_destroy(handle);
}

EndOffsetProbe::~EndOffsetProbe() {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->stop = true;
  state_->wake.notify_all();
  const bool finished = state_->wake.wait_for(
      lock, kStopWait, [this] { return state_->finished; });
  lock.unlock();
  if (finished) {
    thread_.join();
  } else {
    thread_.detach();  // stuck in librdkafka: it keeps its state
  }
}

void EndOffsetProbe::Watch(const std::set<int32_t>& partitions) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (partitions == state_->watched) return;
    state_->watched = partitions;
    std::map<int32_t, int64_t>& ends = state_->ends;
    for (auto it = ends.begin(); it != ends.end();) {
      it = partitions.count(it->first) ? std::next(it) : ends.erase(it);
    }
  }
  state_->wake.notify_all();
}

std::map<int32_t, int64_t> EndOffsetProbe::EndOffsets() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->ends;
}

void EndOffsetProbe::Run(const std::shared_ptr<State>& state) {
  std::unique_lock<std::mutex> lock(state->mu);
  while (!state->stop) {
    const std::vector<int32_t> partitions(state->watched.begin(),
                                          state->watched.end());
    lock.unlock();
    std::map<int32_t, int64_t> found;
    for (int32_t partition : partitions) {
      int64_t low = 0;
      int64_t high = 0;
      // A short timeout: a down broker only delays this thread (but see
      // the header: librdkafka 2.0 may not keep to it).
      if (rd_kafka_query_watermark_offsets(state->handle, state->topic.c_str(),
                                           partition, &low, &high, 2000) ==
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        found[partition] = high;
      }
      std::lock_guard<std::mutex> stopping(state->mu);
      if (state->stop) break;
    }
    lock.lock();
    for (const auto& [partition, high] : found) {
      if (!state->watched.count(partition)) continue;
      int64_t& end = state->ends[partition];
      end = std::max(end, high);
    }
    // Woken early by Watch (new partitions) or the destructor (stop).
    if (!state->stop) state->wake.wait_for(lock, state->interval);
  }
  state->finished = true;
  state->wake.notify_all();
}

}  // namespace phaseloop::kafka
