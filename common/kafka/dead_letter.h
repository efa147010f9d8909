#ifndef PHASELOOP_COMMON_KAFKA_DEAD_LETTER_H_
#define PHASELOOP_COMMON_KAFKA_DEAD_LETTER_H_

// The one format of phaseloop.deadletter (topics.h): a v1::DeadLetter
// naming the record's topic, partition and offset, why it was refused (a
// "class: text" reason) and which component refused it. The reward engine
// and the buffer's ingest both write it, so one reader serves both.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "common/kafka/consumer.h"
#include "common/kafka/lost_records_log.h"
#include "phaseloop/v1/reward.pb.h"

namespace phaseloop::kafka {

// A record's value is cut to this many bytes in its dead letter: the letter
// then fits a Kafka message at the default 1 MB limit whatever the record
// was (a larger one would be refused, and a spool would keep it forever).
inline constexpr size_t kMaxDeadLetterValueBytes = 512 * 1024;
// And its key to this many (a letter's key travels twice: in the letter and
// as the Kafka record's key, which is the letter's).
inline constexpr size_t kMaxDeadLetterKeyBytes = 64 * 1024;

// The dead letter of `message`: refused by `consumer` for `reason`.
v1::DeadLetter MakeDeadLetter(const ConsumedMessage& message,
                              absl::string_view reason,
                              absl::string_view consumer);

// The dead letter of a range of records deleted before they were read:
// reason "lost: ...", source_offset the range's first offset, value the
// lost-records log's JSON line of `entry`.
v1::DeadLetter MakeLostRecordsDeadLetter(const LostRecordsEntry& entry,
                                         absl::string_view consumer);

// The key of a lost range's dead letter: "topic/partition".
std::string LostRecordsDeadLetterKey(const RecordsLost& lost);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_DEAD_LETTER_H_
