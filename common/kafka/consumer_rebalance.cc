// Consumer: assignments, the offsets placed on them, and records found lost
// (see consumer.h; the class's insides are in consumer_internal.h).
#include <librdkafka/rdkafkacpp.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/consumer_internal.h"
#include "common/kafka/kafka_error.h"

namespace phaseloop::kafka {
namespace consumer_internal {

std::vector<TopicPartition> ToPartitions(
    const std::vector<RdKafka::TopicPartition*>& list) {
  std::vector<TopicPartition> result;
  result.reserve(list.size());
  for (const RdKafka::TopicPartition* tp : list) {
    result.push_back({tp->topic(), tp->partition()});
  }
  return result;
}

std::string Name(const TopicPartition& tp) {
  return absl::StrCat(tp.topic, "/", tp.partition);
}

// The first per-partition error of a commit or committed() call.
absl::Status PartitionErrors(const std::vector<RdKafka::TopicPartition*>& list,
                             const std::string& what) {
  for (const RdKafka::TopicPartition* tp : list) {
    if (tp->err() != RdKafka::ERR_NO_ERROR) {
      return KafkaStatus(tp->err(), absl::StrCat(what, " ", tp->topic(), "/",
                                                 tp->partition()));
    }
  }
  return absl::OkStatus();
}

absl::Status RecordsLostStatus(const RecordsLost& lost,
                               const std::string& why) {
  absl::Status classified = ClassifiedStatus(
      ErrorClass::kPermanent,
      absl::StrCat("Kafka consumer: records lost: ", lost.topic, "/",
                   lost.partition, " offsets ", lost.first_offset, "..",
                   lost.last_offset, " (", lost.count(), " records) ", why,
                   "; consuming goes on after them"));
  absl::Status status(absl::StatusCode::kDataLoss, classified.message());
  classified.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) {
        status.SetPayload(url, payload);
      });
  status.SetPayload(
      kRecordsLostPayload,
      absl::Cord(absl::StrCat(lost.partition, " ", lost.first_offset, " ",
                              lost.last_offset, " ", lost.topic)));
  return status;
}

}  // namespace consumer_internal

using consumer_internal::kCommittedTimeoutMs;
using consumer_internal::kWatermarkTimeoutMs;
using consumer_internal::Name;
using consumer_internal::PartitionErrors;
using consumer_internal::PartitionList;
using consumer_internal::RecordsLostStatus;
using consumer_internal::ToPartitions;

void Consumer::Impl::Expect(const TopicPartition& tp, int64_t offset) {
  suspected.erase(tp);
  if (offset >= 0) {
    expected[tp] = offset;
  } else if (offset == RdKafka::Topic::OFFSET_BEGINNING) {
    expected[tp] = 0;
  } else {
    expected.erase(tp);
  }
}

void Consumer::Impl::QueueLoss(const RecordsLost& lost,
                               const std::string& why) {
  ++stats.losses;
  stats.records_lost += lost.count();
  pending.emplace_back(RecordsLostStatus(lost, why));
}

void Consumer::Impl::CheckJump(const ConsumedMessage& message) {
  const TopicPartition tp{message.topic, message.partition};
  suspected.erase(tp);
  auto it = expected.find(tp);
  if (it == expected.end()) {
    expected[tp] = message.offset + 1;
    return;
  }
  const int64_t want = it->second;
  it->second = message.offset + 1;
  if (message.offset <= want) return;
  int64_t low = -1;
  int64_t high = -1;
  RdKafka::ErrorCode err = consumer->query_watermark_offsets(
      message.topic, message.partition, &low, &high, kWatermarkTimeoutMs);
  if (err == RdKafka::ERR_NO_ERROR) {
    // Offsets the log still starts at or before were skipped for another
    // reason (compaction, transaction markers): nothing was lost.
    if (low <= want) return;
    QueueLoss({message.topic, message.partition, want,
               std::min(low, message.offset) - 1},
              absl::StrCat("were deleted before this consumer read them (log "
                           "start offset ",
                           low, ")"));
    return;
  }
  QueueLoss({message.topic, message.partition, want, message.offset - 1},
            absl::StrCat("were skipped: the next record came at offset ",
                         message.offset,
                         " and the log start offset could "
                         "not be read (",
                         RdKafka::err2str(err), ")"));
}

void Consumer::Impl::CheckIdle() {
  for (auto& [tp, want] : expected) {
    int64_t low = -1;
    int64_t high = -1;
    if (consumer->get_watermark_offsets(tp.topic, tp.partition, &low, &high) !=
            RdKafka::ERR_NO_ERROR ||
        low <= want) {
      suspected.erase(tp);
      continue;
    }
    auto seen = suspected.find(tp);
    if (seen == suspected.end() || seen->second != want) {
      suspected[tp] = want;
      continue;
    }
    suspected.erase(seen);
    QueueLoss({tp.topic, tp.partition, want, low - 1},
              absl::StrCat("were deleted before this consumer read them (log "
                           "start offset ",
                           low, ")"));
    want = low;
  }
}

absl::Status Consumer::Impl::ApplyCommittedOffsets(
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  PartitionList unplaced;
  for (const RdKafka::TopicPartition* tp : partitions) {
    if (tp->offset() < 0) {
      unplaced.Add({tp->topic(), tp->partition()},
                   RdKafka::Topic::OFFSET_INVALID);
    }
  }
  if (unplaced.list.empty()) return absl::OkStatus();
  RdKafka::ErrorCode err =
      consumer->committed(unplaced.list, kCommittedTimeoutMs);
  absl::Status status = KafkaStatus(err, "committed offsets");
  if (status.ok())
    status = PartitionErrors(unplaced.list, "committed offset of");
  if (!status.ok()) {
    return ClassifiedStatus(
        ErrorClass::kFatal,
        absl::StrCat("Kafka consumer: the group's committed offsets of ",
                     unplaced.list.size(),
                     " newly assigned partitions could not be read (",
                     status.message(),
                     "); without them records lost before the start cannot be "
                     "detected: this consumer reads nothing more: close it "
                     "and create a new one"));
  }
  std::map<TopicPartition, int64_t> committed;
  for (const RdKafka::TopicPartition* tp : unplaced.list) {
    committed[{tp->topic(), tp->partition()}] = tp->offset();
  }
  for (RdKafka::TopicPartition* tp : partitions) {
    if (tp->offset() >= 0) continue;
    auto found = committed.find({tp->topic(), tp->partition()});
    tp->set_offset(
        found != committed.end() && found->second >= 0 ? found->second : 0);
  }
  return absl::OkStatus();
}

absl::Status Consumer::Impl::ApplyStoredOffsets(
    const std::vector<RdKafka::TopicPartition*>& partitions) {
  if (!options.offset_lookup) return absl::OkStatus();
  absl::StatusOr<OffsetMap> offsets =
      options.offset_lookup(ToPartitions(partitions));
  if (!offsets.ok()) {
    return ClassifiedStatus(
        ErrorClass::kFatal,
        absl::StrCat(
            "Kafka consumer: offset lookup for ", partitions.size(),
            " newly assigned partitions failed: ", offsets.status().message(),
            "; this consumer reads nothing more: close it and create "
            "a new one"));
  }
  for (RdKafka::TopicPartition* tp : partitions) {
    auto found = offsets->find({tp->topic(), tp->partition()});
    if (found == offsets->end()) continue;
    if (found->second < 0) {
      return ClassifiedStatus(
          ErrorClass::kFatal,
          absl::StrCat("Kafka consumer: offset lookup returned offset ",
                       found->second, " for ", Name(found->first),
                       "; stored next offsets are >= 0"));
    }
    tp->set_offset(found->second);
  }
  return absl::OkStatus();
}

void Consumer::Impl::rebalance_cb(
    RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
    std::vector<RdKafka::TopicPartition*>& partitions) {
  ++stats.rebalances;
  const bool cooperative = consumer->rebalance_protocol() == "COOPERATIVE";
  RdKafka::ErrorCode result = RdKafka::ERR_NO_ERROR;
  std::unique_ptr<RdKafka::Error> error;
  if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
    if (broken.ok()) broken = ApplyStoredOffsets(partitions);
    if (broken.ok()) broken = ApplyCommittedOffsets(partitions);
    if (broken.ok()) {
      if (!cooperative) expected.clear();
      for (const RdKafka::TopicPartition* tp : partitions) {
        Expect({tp->topic(), tp->partition()}, tp->offset());
      }
    }
    if (!broken.ok()) {
      // Never read from offsets the caller's store cannot vouch for.
      if (!cooperative) result = consumer->unassign();
    } else if (cooperative) {
      error.reset(consumer->incremental_assign(partitions));
    } else {
      result = consumer->assign(partitions);
    }
    settled = broken.ok();
  } else if (err == RdKafka::ERR__REVOKE_PARTITIONS) {
    settled = false;
    if (options.on_revoke) options.on_revoke(ToPartitions(partitions));
    for (const TopicPartition& tp : ToPartitions(partitions)) {
      expected.erase(tp);
      suspected.erase(tp);
    }
    if (cooperative) {
      error.reset(consumer->incremental_unassign(partitions));
    } else {
      result = consumer->unassign();
    }
  } else {
    rebalance_error = KafkaStatus(err, "rebalance");
    settled = false;
    result = consumer->unassign();
    expected.clear();
    suspected.clear();
  }
  if (error != nullptr) result = error->code();
  if (result != RdKafka::ERR_NO_ERROR && rebalance_error.ok()) {
    rebalance_error = KafkaStatus(result, "applying a rebalance",
                                  error != nullptr ? error->str() : "");
  }
}

}  // namespace phaseloop::kafka
