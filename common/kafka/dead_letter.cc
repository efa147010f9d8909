#include "common/kafka/dead_letter.h"

#include "absl/strings/str_cat.h"

namespace phaseloop::kafka {
namespace {

void SetValue(absl::string_view value, v1::DeadLetter& letter) {
  letter.set_value_size(static_cast<int64_t>(value.size()));
  if (value.size() > kMaxDeadLetterValueBytes) {
    value = value.substr(0, kMaxDeadLetterValueBytes);
    letter.set_value_truncated(true);
  }
  letter.set_value(std::string(value));
}

}  // namespace

v1::DeadLetter MakeDeadLetter(const ConsumedMessage& message,
                              absl::string_view reason,
                              absl::string_view consumer) {
  v1::DeadLetter letter;
  letter.set_source_topic(message.topic);
  letter.set_source_partition(message.partition);
  letter.set_source_offset(message.offset);
  if (message.key.size() > kMaxDeadLetterKeyBytes) {
    letter.set_key(message.key.substr(0, kMaxDeadLetterKeyBytes));
    letter.set_key_truncated(true);
  } else {
    letter.set_key(message.key);
  }
  SetValue(message.value, letter);
  letter.set_reason(std::string(reason));
  letter.set_consumer(std::string(consumer));
  return letter;
}

v1::DeadLetter MakeLostRecordsDeadLetter(const LostRecordsEntry& entry,
                                         absl::string_view consumer) {
  const RecordsLost& lost = entry.lost;
  v1::DeadLetter letter;
  letter.set_source_topic(lost.topic);
  letter.set_source_partition(lost.partition);
  letter.set_source_offset(lost.first_offset);
  letter.set_key(LostRecordsDeadLetterKey(lost));
  SetValue(LostRecordsLine(entry), letter);
  letter.set_reason(absl::StrCat("lost: offsets ", lost.first_offset, "..",
                                 lost.last_offset,
                                 " deleted from Kafka before they were read"));
  letter.set_consumer(std::string(consumer));
  return letter;
}

std::string LostRecordsDeadLetterKey(const RecordsLost& lost) {
  return absl::StrCat(lost.topic, "/", lost.partition);
}

}  // namespace phaseloop::kafka
