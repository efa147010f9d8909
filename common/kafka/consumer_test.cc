#include "common/kafka/consumer.h"

#include <iostream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/producer.h"
#include "common/kafka/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ConsumerTest : public ::testing::Test {
 protected:
  // A cluster of `brokers` with `topic` (`partitions` partitions) holding
  // `count` records "value-i" keyed "key-(i % 20)".
  void SetUpTopic(int brokers, const std::string& topic, int partitions,
                  int count) {
    auto cluster = EmbeddedCluster::Start(brokers);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
    ASSERT_TRUE(cluster_->CreateTopic(topic, partitions, brokers).ok());
    if (count > 0) Produce(topic, 0, count);
  }

  void Produce(const std::string& topic, int first, int count) {
    ProducerOptions options;
    options.bootstrap_servers = cluster_->bootstrap_servers();
    auto producer = Producer::Create(options);
    ASSERT_TRUE(producer.ok()) << producer.status();
    for (int i = first; i < first + count; ++i) {
      ASSERT_TRUE((*producer)
                      ->Produce(topic, absl::StrCat("key-", i % 20),
                                absl::StrCat("value-", i))
                      .ok());
    }
    ASSERT_TRUE((*producer)->Flush(seconds(10)).ok());
  }

  std::unique_ptr<Consumer> MakeConsumer(ConsumerOptions options) {
    auto consumer = Consumer::Create(options);
    EXPECT_TRUE(consumer.ok()) << consumer.status();
    return consumer.ok() ? std::move(*consumer) : nullptr;
  }

  const std::string& bootstrap() const { return cluster_->bootstrap_servers(); }

  std::unique_ptr<EmbeddedCluster> cluster_;
};

// Two members of one group split the partitions and between them see every
// record exactly once.
TEST_F(ConsumerTest, TwoConsumersInOneGroupShareThePartitions) {
  SetUpTopic(2, "shared", 4, 0);
  auto first =
      MakeConsumer(testing::GroupOptions(bootstrap(), "workers", {"shared"}));
  auto second =
      MakeConsumer(testing::GroupOptions(bootstrap(), "workers", {"shared"}));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(
      testing::WaitForAssignments({first.get(), second.get()}, 4, seconds(20)));
  Produce("shared", 0, 200);

  auto received =
      testing::ConsumeFrom({first.get(), second.get()}, 200, seconds(20));
  EXPECT_FALSE(received[0].empty());
  EXPECT_FALSE(received[1].empty());
  std::set<std::string> values;
  std::map<int32_t, size_t> reader_of_partition;
  for (size_t reader = 0; reader < 2; ++reader) {
    for (const ConsumedMessage& message : received[reader]) {
      EXPECT_TRUE(values.insert(message.value).second)
          << "duplicate " << message.value;
      auto [it, inserted] =
          reader_of_partition.emplace(message.partition, reader);
      EXPECT_EQ(it->second, reader)
          << "partition " << message.partition << " read by both members";
    }
  }
  EXPECT_EQ(values.size(), 200u);
  for (Consumer* consumer : {first.get(), second.get()}) {
    auto extra = consumer->Poll(milliseconds(300));
    ASSERT_TRUE(extra.ok());
    EXPECT_FALSE(extra->has_value()) << "extra record " << (*extra)->value;
  }
  EXPECT_TRUE(first->Close().ok());
  EXPECT_TRUE(second->Close().ok());
}

// A consumer that keeps its position in its own store (as the replay buffer
// does in SQLite) resumes exactly after what it stored, even when the
// group's committed offsets say otherwise.
TEST_F(ConsumerTest, ResumesExactlyAfterExternallyStoredOffsets) {
  SetUpTopic(2, "resume", 4, 100);
  OffsetMap store;  // stands in for the buffer's offsets table
  std::vector<TopicPartition> looked_up;
  ConsumerOptions options =
      testing::GroupOptions(bootstrap(), "buffer", {"resume"});
  options.offset_lookup = [&](const std::vector<TopicPartition>& assigned)
      -> absl::StatusOr<OffsetMap> {
    looked_up.insert(looked_up.end(), assigned.begin(), assigned.end());
    return store;
  };

  std::set<std::string> seen;
  {
    auto consumer = MakeConsumer(options);
    ASSERT_NE(consumer, nullptr);
    auto received = testing::ConsumeFrom({consumer.get()}, 40, seconds(20));
    ASSERT_EQ(received[0].size(), 40u);
    for (const ConsumedMessage& message : received[0]) {
      seen.insert(message.value);
      store[{message.topic, message.partition}] = message.offset + 1;
    }
    // A stale group commit (first record only) that the store must override.
    ASSERT_TRUE(consumer->CommitMessage(received[0].front()).ok());
    ASSERT_TRUE(consumer->Close().ok());
  }
  EXPECT_EQ(looked_up.size(), 4u);
  const OffsetMap stored = store;

  auto consumer = MakeConsumer(options);
  ASSERT_NE(consumer, nullptr);
  auto received = testing::ConsumeFrom({consumer.get()}, 60, seconds(20));
  ASSERT_EQ(received[0].size(), 60u);
  std::map<TopicPartition, int64_t> first_offset;
  for (const ConsumedMessage& message : received[0]) {
    EXPECT_TRUE(seen.insert(message.value).second)
        << "read again after restart: " << message.value;
    first_offset.emplace(TopicPartition{message.topic, message.partition},
                         message.offset);
  }
  EXPECT_EQ(seen.size(), 100u);
  for (const auto& [tp, offset] : first_offset) {
    auto it = stored.find(tp);
    EXPECT_EQ(offset, it == stored.end() ? 0 : it->second)
        << tp.topic << "/" << tp.partition;
  }
  auto extra = consumer->Poll(milliseconds(300));
  ASSERT_TRUE(extra.ok());
  EXPECT_FALSE(extra->has_value());
}

// An embedded cluster's id carries its address as it advertises it: the
// same cluster reached as 127.0.0.1 or as localhost has one id (the
// buffer would otherwise read its partitions again from 0), another
// embedded cluster another.
TEST_F(ConsumerTest,
       AnEmbeddedClustersIdDoesNotDependOnTheSpellingOfItsAddress) {
  SetUpTopic(1, "ids", 1, 0);
  std::string other_spelling = bootstrap();
  const size_t host = other_spelling.find("127.0.0.1");
  ASSERT_NE(host, std::string::npos) << other_spelling;
  other_spelling.replace(host, 9, "localhost");
  auto as_given =
      MakeConsumer(testing::GroupOptions(bootstrap(), "a", {"ids"}));
  auto as_localhost =
      MakeConsumer(testing::GroupOptions(other_spelling, "b", {"ids"}));
  ASSERT_NE(as_given, nullptr);
  ASSERT_NE(as_localhost, nullptr);
  const std::string id = as_given->ClusterId(seconds(10));
  EXPECT_TRUE(absl::StartsWith(id, "mockCluster")) << id;
  EXPECT_NE(id.find('@'), std::string::npos) << id;
  EXPECT_EQ(as_localhost->ClusterId(seconds(10)), id);
  auto another = EmbeddedCluster::Start(1);
  ASSERT_TRUE(another.ok()) << another.status();
  auto there = MakeConsumer(
      testing::GroupOptions((*another)->bootstrap_servers(), "c", {"ids"}));
  ASSERT_NE(there, nullptr);
  EXPECT_NE(there->ClusterId(seconds(10)), id);
}

TEST_F(ConsumerTest, FailedOffsetLookupIsFatal) {
  SetUpTopic(1, "lookup", 2, 10);
  ConsumerOptions options =
      testing::GroupOptions(bootstrap(), "broken", {"lookup"});
  options.offset_lookup =
      [](const std::vector<TopicPartition>&) -> absl::StatusOr<OffsetMap> {
    return absl::UnavailableError("database is locked");
  };
  auto consumer = MakeConsumer(options);
  ASSERT_NE(consumer, nullptr);
  absl::Status status;
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (status.ok() && std::chrono::steady_clock::now() < deadline) {
    auto message = consumer->Poll(milliseconds(100));
    ASSERT_FALSE(message.ok() && message->has_value())
        << "read a record from an offset the store did not vouch for";
    status = message.status();
  }
  EXPECT_EQ(ClassOf(status), ErrorClass::kFatal) << status;
  EXPECT_NE(status.message().find("database is locked"), std::string::npos);
  EXPECT_EQ(ClassOf(consumer->Poll(milliseconds(10)).status()),
            ErrorClass::kFatal);
}

// Without a subscription: explicit assignment, seek, commit and committed.
TEST_F(ConsumerTest, AssignsSeeksAndCommitsExplicitly) {
  SetUpTopic(1, "manual", 1, 10);
  auto consumer =
      MakeConsumer(testing::GroupOptions(bootstrap(), "manual", {}));
  ASSERT_NE(consumer, nullptr);
  const TopicPartition tp{"manual", 0};
  ASSERT_TRUE(consumer->AssignWithOffsets({{tp, 7}}).ok());
  EXPECT_EQ(consumer->Assignment().size(), 1u);
  auto received = testing::ConsumeFrom({consumer.get()}, 3, seconds(10));
  ASSERT_EQ(received[0].size(), 3u);
  EXPECT_EQ(received[0][0].value, "value-7");
  EXPECT_EQ(received[0][2].value, "value-9");
  EXPECT_EQ(received[0][2].offset, 9);

  ASSERT_TRUE(consumer->Seek(tp, 2, seconds(5)).ok());
  received = testing::ConsumeFrom({consumer.get()}, 1, seconds(10));
  ASSERT_EQ(received[0].size(), 1u);
  EXPECT_EQ(received[0][0].value, "value-2");

  ASSERT_TRUE(consumer->CommitMessage(received[0][0]).ok());
  auto committed = consumer->Committed({tp}, seconds(5));
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(*committed, (OffsetMap{{tp, 3}}));
}

TEST(ConsumerOptionsTest, RejectsBadOptions) {
  ConsumerOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  EXPECT_TRUE(absl::IsInvalidArgument(Consumer::Create(options).status()));
  options.group_id = "g";
  options.config = {{"enable.auto.commit", "true"}};
  EXPECT_TRUE(absl::IsInvalidArgument(Consumer::Create(options).status()));
  options.config = {{"test.mock.num.brokers", "1"}};
  EXPECT_TRUE(absl::IsInvalidArgument(Consumer::Create(options).status()));
}

// --- Records deleted by retention before they were read ---

// What a consumer saw: loss reports and records, in order.
struct LossRun {
  std::vector<RecordsLost> lost;
  std::vector<int64_t> offsets;
};

// Polls until `count` records arrived (or 30 s); retriable errors are
// tolerated, a DataLoss status is collected, anything else fails.
LossRun ConsumeCountingLosses(Consumer& consumer, size_t count) {
  LossRun run;
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (run.offsets.size() < count &&
         std::chrono::steady_clock::now() < deadline) {
    auto message = consumer.Poll(milliseconds(100));
    if (!message.ok()) {
      if (auto lost = RecordsLostOf(message.status())) {
        EXPECT_EQ(message.status().code(), absl::StatusCode::kDataLoss);
        EXPECT_NE(message.status().message().find(absl::StrCat(
                      lost->topic, "/", lost->partition, " offsets ",
                      lost->first_offset, "..", lost->last_offset)),
                  std::string::npos)
            << message.status();
        run.lost.push_back(*lost);
        continue;
      }
      EXPECT_EQ(ClassOf(message.status()), ErrorClass::kRetriable)
          << message.status();
      continue;
    }
    if (message->has_value()) run.offsets.push_back((**message).offset);
  }
  return run;
}

class RecordsLostTest : public ConsumerTest {
 protected:
  // One partition overfilled with 160 records of 64 KB (10 MB, twice what
  // the embedded cluster keeps); low_ and high_ are its watermarks after.
  void SetUp() override {
    SetUpTopic(1, "overflow", 1, 0);
    testing::ProduceBulk(bootstrap(), "overflow", 160, 64 * 1024);
    std::tie(low_, high_) = testing::Watermarks(bootstrap(), "overflow", 0);
    ASSERT_EQ(high_, 160);
    ASSERT_GT(low_, 0) << "the embedded cluster kept everything";
  }

  // Consumes what is left and checks one loss first..low_-1 and then every
  // record low_..high_-1 in order.
  void ExpectLossFrom(Consumer& consumer, int64_t first) {
    LossRun run = ConsumeCountingLosses(consumer, high_ - low_);
    ASSERT_EQ(run.lost.size(), 1u);
    EXPECT_EQ(run.lost[0].topic, "overflow");
    EXPECT_EQ(run.lost[0].partition, 0);
    EXPECT_EQ(run.lost[0].first_offset, first);
    EXPECT_EQ(run.lost[0].last_offset, low_ - 1);
    ASSERT_EQ(run.offsets.size(), static_cast<size_t>(high_ - low_));
    for (size_t i = 0; i < run.offsets.size(); ++i) {
      EXPECT_EQ(run.offsets[i], low_ + static_cast<int64_t>(i));
    }
    EXPECT_EQ(consumer.stats().records_lost, low_ - first);
    EXPECT_EQ(consumer.stats().losses, 1);
    EXPECT_EQ(consumer.stats().messages, high_ - low_);
  }

  int64_t low_ = -1;
  int64_t high_ = -1;
};

// A new group (no stored or committed offset) is owed the partition from
// offset 0: what retention deleted is reported, the rest delivered.
TEST_F(RecordsLostTest, NewGroupIsToldWhatWasDeletedBeforeItRead) {
  auto consumer =
      MakeConsumer(testing::GroupOptions(bootstrap(), "fresh", {"overflow"}));
  ASSERT_NE(consumer, nullptr);
  ExpectLossFrom(*consumer, 0);
}

// A stored offset below the log start offset: the loss starts there.
TEST_F(RecordsLostTest, StoredOffsetBelowTheLogStartIsReported) {
  ConsumerOptions options =
      testing::GroupOptions(bootstrap(), "stored", {"overflow"});
  options.offset_lookup = [](const std::vector<TopicPartition>& assigned)
      -> absl::StatusOr<OffsetMap> {
    OffsetMap next;
    for (const TopicPartition& tp : assigned) next[tp] = 7;
    return next;
  };
  auto consumer = MakeConsumer(options);
  ASSERT_NE(consumer, nullptr);
  ExpectLossFrom(*consumer, 7);
}

// The group's committed offset below the log start offset: the loss starts
// there.
TEST_F(RecordsLostTest, CommittedOffsetBelowTheLogStartIsReported) {
  {
    auto committer =
        MakeConsumer(testing::GroupOptions(bootstrap(), "committed", {}));
    ASSERT_NE(committer, nullptr);
    ASSERT_TRUE(committer->Commit({{{"overflow", 0}, 3}}).ok());
    ASSERT_TRUE(committer->Close().ok());
  }
  auto consumer = MakeConsumer(
      testing::GroupOptions(bootstrap(), "committed", {"overflow"}));
  ASSERT_NE(consumer, nullptr);
  ExpectLossFrom(*consumer, 3);
}

// Resuming at or above the log start offset loses nothing and says nothing.
TEST_F(RecordsLostTest, NoLossWhenResumingAboveTheLogStart) {
  ConsumerOptions options =
      testing::GroupOptions(bootstrap(), "above", {"overflow"});
  const int64_t start = low_ + 1;
  options.offset_lookup = [start](const std::vector<TopicPartition>& assigned)
      -> absl::StatusOr<OffsetMap> {
    OffsetMap next;
    for (const TopicPartition& tp : assigned) next[tp] = start;
    return next;
  };
  auto consumer = MakeConsumer(options);
  ASSERT_NE(consumer, nullptr);
  LossRun run = ConsumeCountingLosses(*consumer, high_ - start);
  EXPECT_TRUE(run.lost.empty());
  ASSERT_EQ(run.offsets.size(), static_cast<size_t>(high_ - start));
  EXPECT_EQ(run.offsets.front(), start);
  // Nothing more comes, and idle polls report nothing either.
  for (int i = 0; i < 5; ++i) {
    auto message = consumer->Poll(milliseconds(50));
    ASSERT_TRUE(message.ok()) << message.status();
    EXPECT_FALSE(message->has_value());
  }
  EXPECT_EQ(consumer->stats().records_lost, 0);
}

// A partition directly assigned below the log start offset (no group).
TEST_F(RecordsLostTest, AssignedOffsetBelowTheLogStartIsReported) {
  ConsumerOptions options;
  options.bootstrap_servers = bootstrap();
  options.group_id = "assign-only";
  auto consumer = MakeConsumer(options);
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->AssignWithOffsets({{{"overflow", 0}, 0}}).ok());
  ExpectLossFrom(*consumer, 0);
}

// What the embedded cluster keeps of 1 KB records: a little under
// kMockPartitionMaxBytes of them (each stored with ~20% overhead).
TEST_F(ConsumerTest, EmbeddedClusterKeepsAboutFiveMegabytesPerPartition) {
  SetUpTopic(1, "measured", 1, 0);
  testing::ProduceBulk(bootstrap(), "measured", 8000, 1024);
  auto [low, high] = testing::Watermarks(bootstrap(), "measured", 0);
  ASSERT_EQ(high, 8000);
  const int64_t kept = high - low;
  EXPECT_LT(kept * 1024, kMockPartitionMaxBytes);
  EXPECT_GT(kept * 1024, kMockPartitionMaxBytes * 3 / 4);
  std::cerr << "embedded cluster kept " << kept << " of 8000 1 KB records\n";
}

}  // namespace
}  // namespace phaseloop::kafka
