// The dead-letter format both the reward engine and the buffer's ingest
// write: where the record came from, why, who refused it, and a value that
// always fits a Kafka message.
#include "common/kafka/dead_letter.h"

#include <gtest/gtest.h>

#include <string>

namespace phaseloop::kafka {
namespace {

ConsumedMessage Message(std::string value) {
  ConsumedMessage m;
  m.topic = "phaseloop.search.episodes";
  m.partition = 3;
  m.offset = 41;
  m.key = "episode-7";
  m.value = std::move(value);
  return m;
}

TEST(DeadLetterTest, NamesTheRecordItsReasonAndTheConsumer) {
  const v1::DeadLetter letter = MakeDeadLetter(
      Message("\x01\x02"), "malformed: not an Episode", "buffer-ingest");
  EXPECT_EQ(letter.source_topic(), "phaseloop.search.episodes");
  EXPECT_EQ(letter.source_partition(), 3);
  EXPECT_EQ(letter.source_offset(), 41);
  EXPECT_EQ(letter.key(), "episode-7");
  EXPECT_EQ(letter.value(), "\x01\x02");
  EXPECT_EQ(letter.value_size(), 2);
  EXPECT_FALSE(letter.value_truncated());
  EXPECT_EQ(letter.reason(), "malformed: not an Episode");
  EXPECT_EQ(letter.consumer(), "buffer-ingest");
}

// A 2 MB record's letter would be refused by a producer at Kafka's default
// 1 MB limit, for ever: its value is cut, and the letter says so.
TEST(DeadLetterTest, ALargeRecordsValueIsCutSoTheLetterFitsAMessage) {
  const std::string huge(2'000'000, 'x');
  const v1::DeadLetter letter =
      MakeDeadLetter(Message(huge), "malformed: x", "reward-engine");
  EXPECT_TRUE(letter.value_truncated());
  EXPECT_EQ(letter.value_size(), 2'000'000);
  EXPECT_EQ(letter.value(), huge.substr(0, kMaxDeadLetterValueBytes));
  EXPECT_LT(letter.ByteSizeLong(), 1'000'000u);

  ConsumedMessage keyed = Message("v");
  keyed.key = std::string(100'000, 'k');
  const v1::DeadLetter cut = MakeDeadLetter(keyed, "r", "c");
  EXPECT_TRUE(cut.key_truncated());
  EXPECT_EQ(cut.key().size(), kMaxDeadLetterKeyBytes);

  const v1::DeadLetter exact = MakeDeadLetter(
      Message(std::string(kMaxDeadLetterValueBytes, 'y')), "r", "c");
  EXPECT_FALSE(exact.value_truncated());
  EXPECT_EQ(exact.value().size(), kMaxDeadLetterValueBytes);
}

TEST(DeadLetterTest, ALostRangeNamesItsOffsetsAndCarriesTheLogLine) {
  LostRecordsEntry entry;
  entry.lost = {"phaseloop.sli", 1, 10, 19};
  entry.group = "g";
  entry.consumer = "reward engine";
  entry.time_ms = 1234;
  const v1::DeadLetter letter =
      MakeLostRecordsDeadLetter(entry, "reward-engine");
  EXPECT_EQ(letter.source_topic(), "phaseloop.sli");
  EXPECT_EQ(letter.source_partition(), 1);
  EXPECT_EQ(letter.source_offset(), 10);
  EXPECT_EQ(letter.key(), "phaseloop.sli/1");
  EXPECT_EQ(letter.reason(),
            "lost: offsets 10..19 deleted from Kafka before they were read");
  EXPECT_EQ(letter.value(), LostRecordsLine(entry));
  EXPECT_EQ(letter.consumer(), "reward-engine");
}

}  // namespace
}  // namespace phaseloop::kafka
