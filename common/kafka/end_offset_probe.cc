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
  probe->handle_ = handle;
  probe->topic_ = topic;
  probe->interval_ = interval;
  probe->thread_ = std::thread([p = probe.get()] { p->Run(); });
  return probe;
}

EndOffsetProbe::~EndOffsetProbe() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (handle_ != nullptr) rd_kafka_destroy(handle_);
}

void EndOffsetProbe::Watch(const std::set<int32_t>& partitions) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (partitions == watched_) return;
    watched_ = partitions;
    for (auto it = ends_.begin(); it != ends_.end();) {
      it = partitions.count(it->first) ? std::next(it) : ends_.erase(it);
    }
  }
  wake_.notify_all();
}

std::map<int32_t, int64_t> EndOffsetProbe::EndOffsets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ends_;
}

void EndOffsetProbe::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const std::vector<int32_t> partitions(watched_.begin(), watched_.end());
    lock.unlock();
    std::map<int32_t, int64_t> found;
    for (int32_t partition : partitions) {
      int64_t low = 0;
      int64_t high = 0;
      // A short timeout: a down broker only delays this thread.
      if (rd_kafka_query_watermark_offsets(handle_, topic_.c_str(), partition,
                                           &low, &high, 2000) ==
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        found[partition] = high;
      }
    }
    lock.lock();
    for (const auto& [partition, high] : found) {
      if (!watched_.count(partition)) continue;
      int64_t& end = ends_[partition];
      end = std::max(end, high);
    }
    wake_.wait_for(lock, interval_);
  }
}

}  // namespace phaseloop::kafka
