#include "common/kafka/delivery_spool.h"

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<EmbeddedCluster> StartCluster() {
  auto cluster = EmbeddedCluster::Start(1);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? std::move(*cluster) : nullptr;
}

std::unique_ptr<Producer> MakeProducer(const std::string& bootstrap,
                                       milliseconds delivery_timeout) {
  ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  options.delivery_timeout = delivery_timeout;
  options.close_timeout = seconds(2);
  auto producer = Producer::Create(options);
  EXPECT_TRUE(producer.ok()) << producer.status();
  return producer.ok() ? std::move(*producer) : nullptr;
}

DeliverySpool OpenSpool(const std::string& dir) {
  auto spool = DeliverySpool::Open(dir);
  EXPECT_TRUE(spool.ok()) << spool.status();
  return *std::move(spool);
}

std::multiset<std::string> ValuesIn(const DeliverySpool& spool) {
  auto records = spool.Records();
  EXPECT_TRUE(records.ok()) << records.status();
  std::multiset<std::string> values;
  if (records.ok()) {
    for (const SpooledRecord& r : *records) values.insert(r.value);
  }
  return values;
}

// The broker is down: delivery fails, the records go to the spool (not
// dropped); a retry while it is still down keeps them; once it is back the
// retry delivers each exactly once and empties the spool.
TEST(DeliverySpoolTest, FailedDeliveriesAreKeptThenDeliveredExactlyOnce) {
  auto cluster = StartCluster();
  ASSERT_NE(cluster, nullptr);
  const std::string topic = "spooled";
  ASSERT_TRUE(cluster->CreateTopic(topic, 1, 1).ok());
  ASSERT_TRUE(cluster->SetBrokerDown(kAllBrokers).ok());
  const std::string dir = testing::MakeTempDir() + "/state/spool/episodes";
  DeliverySpool spool = OpenSpool(dir);
  const std::multiset<std::string> sent = {"value-0", "value-1", "value-2",
                                           "value-3", "value-4"};
  {
    auto producer = MakeProducer(cluster->bootstrap_servers(), seconds(1));
    ASSERT_NE(producer, nullptr);
    int i = 0;
    for (const std::string& value : sent) {
      ASSERT_TRUE(
          producer->Produce(topic, absl::StrCat("key-", i++), value).ok());
    }
    EXPECT_FALSE(producer->Flush(seconds(10)).ok());  // the failure is seen
    auto kept = spool.KeepUndelivered(*producer, seconds(1));
    ASSERT_TRUE(kept.ok()) << kept.status();
    EXPECT_EQ(*kept, 5);
  }
  EXPECT_EQ(ValuesIn(spool), sent);
  EXPECT_NE(
      KeptForRetryMessage(5, dir).find("5 records kept for retry in " + dir),
      std::string::npos);

  {  // Next run, broker still down: nothing is lost, nothing delivered.
    auto producer = MakeProducer(cluster->bootstrap_servers(), seconds(1));
    ASSERT_NE(producer, nullptr);
    auto retry = spool.Retry(*producer, seconds(10));
    ASSERT_TRUE(retry.ok()) << retry.status();
    EXPECT_EQ(retry->delivered, 0);
    EXPECT_EQ(retry->kept, 5);
  }
  EXPECT_EQ(ValuesIn(spool), sent);

  ASSERT_TRUE(cluster->SetBrokerUp(kAllBrokers).ok());
  {
    auto producer = MakeProducer(cluster->bootstrap_servers(), seconds(30));
    ASSERT_NE(producer, nullptr);
    auto retry = spool.Retry(*producer, seconds(30));
    ASSERT_TRUE(retry.ok()) << retry.status();
    EXPECT_EQ(retry->delivered, 5);
    EXPECT_EQ(retry->kept, 0);
  }
  EXPECT_TRUE(ValuesIn(spool).empty());
  // Exactly once: the partition holds the 5 records and no more.
  EXPECT_EQ(testing::Watermarks(cluster->bootstrap_servers(), topic, 0),
            std::make_pair(int64_t{0}, int64_t{5}));
  auto consumer = Consumer::Create(testing::GroupOptions(
      cluster->bootstrap_servers(), "check-spooled", {topic}));
  ASSERT_TRUE(consumer.ok()) << consumer.status();
  auto received = testing::ConsumeFrom({consumer->get()}, 5, seconds(20));
  std::multiset<std::string> values;
  for (const ConsumedMessage& m : received[0]) values.insert(m.value);
  EXPECT_EQ(values, sent);
}

// Shutting down while records are still waiting for the broker (their
// delivery timeout far away): they are purged into the spool, not lost with
// the producer.
TEST(DeliverySpoolTest, RecordsStillInFlightAtShutdownAreKept) {
  auto cluster = StartCluster();
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->CreateTopic("in-flight", 1, 1).ok());
  ASSERT_TRUE(cluster->SetBrokerDown(kAllBrokers).ok());
  DeliverySpool spool = OpenSpool(testing::MakeTempDir());
  auto producer = MakeProducer(cluster->bootstrap_servers(), seconds(120));
  ASSERT_NE(producer, nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(producer->Produce("in-flight", "k", absl::StrCat("v", i)).ok());
  }
  auto kept = spool.KeepUndelivered(*producer, milliseconds(200));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, 3);
  EXPECT_EQ(producer->stats().in_flight(), 0);
  EXPECT_EQ(ValuesIn(spool), (std::multiset<std::string>{"v0", "v1", "v2"}));
}

// A spool file that cannot be parsed is set aside, named, never deleted.
TEST(DeliverySpoolTest, UnreadableFileIsSetAsideAndNamed) {
  auto cluster = StartCluster();
  ASSERT_NE(cluster, nullptr);
  const std::string dir = testing::MakeTempDir();
  DeliverySpool spool = OpenSpool(dir);
  ASSERT_TRUE(files::WriteFileAtomically(dir + "/0-1-0.spool", "garbage").ok());
  auto producer = MakeProducer(cluster->bootstrap_servers(), seconds(10));
  ASSERT_NE(producer, nullptr);
  auto retry = spool.Retry(*producer, seconds(10));
  ASSERT_TRUE(retry.ok()) << retry.status();
  ASSERT_EQ(retry->unreadable.size(), 1u);
  EXPECT_EQ(retry->unreadable[0], dir + "/0-1-0.spool.unreadable");
  EXPECT_TRUE(std::filesystem::exists(retry->unreadable[0]));
}

// A record too large to produce (larger than the producer may send) can
// never be delivered: kept, it was refused at every run. It is moved to a
// *.refused file, named with the reason, and the records beside it are
// delivered; the next retry has nothing left to do.
TEST(DeliverySpoolTest, ARecordTooLargeToProduceIsSetAsideAndNamed) {
  auto cluster = StartCluster();
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->CreateTopic("sized", 1, 1).ok());
  const std::string dir = testing::MakeTempDir();
  DeliverySpool spool = OpenSpool(dir);
  const std::string huge(2'000'000, 'x');  // over the producer's 1 MB
  ASSERT_TRUE(spool.Keep({{"sized", "a", "small"}, {"sized", "b", huge}}).ok());
  auto producer = MakeProducer(cluster->bootstrap_servers(), seconds(10));
  ASSERT_NE(producer, nullptr);
  auto retry = spool.Retry(*producer, seconds(10));
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(retry->delivered, 1);
  EXPECT_EQ(retry->kept, 0);
  ASSERT_EQ(retry->refused.size(), 1u);
  EXPECT_EQ(retry->refused[0].count, 1);
  EXPECT_TRUE(absl::EndsWith(retry->refused[0].file, ".refused"))
      << retry->refused[0].file;
  EXPECT_FALSE(retry->refused[0].reason.empty());
  EXPECT_EQ(
      testing::Watermarks(cluster->bootstrap_servers(), "sized", 0).second, 1);
  // The set-aside file holds the record, in the spool's format.
  std::string content;
  ASSERT_TRUE(files::ReadWholeFile(retry->refused[0].file, &content).ok());
  EXPECT_NE(content.find(huge), std::string::npos);
  EXPECT_TRUE(ValuesIn(spool).empty());
  const std::string said = SpoolRetryMessage(*retry, dir);
  EXPECT_NE(said.find("1 that can never be produced (larger than the "
                      "producer may send"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(retry->refused[0].file), std::string::npos) << said;

  auto again = spool.Retry(*producer, seconds(10));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->delivered + again->kept, 0);
  EXPECT_TRUE(again->refused.empty());
  EXPECT_EQ(SpoolRetryMessage(*again, dir), "");
}

// Five small records "v0".."v4" for topic "batch" kept in `spool` as one
// batch, retried after the cluster's next `refusals` produce requests are
// refused as too large (the first: the whole batch's).
absl::StatusOr<SpoolRetry> RetryFiveRecordsAfterRefusals(
    EmbeddedCluster& cluster, DeliverySpool& spool, int refusals) {
  absl::Status created = cluster.CreateTopic("batch", 1, 1);
  if (!created.ok()) return created;
  std::vector<SpooledRecord> records;
  for (int i = 0; i < 5; ++i) {
    records.push_back({"batch", "k", absl::StrCat("v", i)});
  }
  if (absl::Status kept = spool.Keep(records); !kept.ok()) return kept;
  absl::Status pushed = cluster.PushRequestErrors(
      ApiKey::kProduce, std::vector<rd_kafka_resp_err_t>(
                            refusals, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE));
  if (!pushed.ok()) return pushed;
  auto producer = MakeProducer(cluster.bootstrap_servers(), seconds(10));
  if (producer == nullptr) return absl::InternalError("no producer");
  return spool.Retry(*producer, seconds(10));
}

// The broker refusing a produce request (message size, for the whole
// batch) says nothing of each record: each is produced again alone, and a
// record the broker takes alone is delivered (a first version set the five
// small records aside for good; the next kept them all, so one record the
// topic can never take held its batch-mates in the spool for ever).
TEST(DeliverySpoolTest, ABatchTheBrokerRefusesOnceIsDeliveredRecordByRecord) {
  auto cluster = StartCluster();
  ASSERT_NE(cluster, nullptr);
  DeliverySpool spool = OpenSpool(testing::MakeTempDir());
  auto retry = RetryFiveRecordsAfterRefusals(*cluster, spool, 1);
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_TRUE(retry->refused.empty());
  EXPECT_EQ(retry->kept, 0);
  EXPECT_EQ(retry->delivered, 5);
  EXPECT_TRUE(ValuesIn(spool).empty());
  EXPECT_EQ(
      testing::Watermarks(cluster->bootstrap_servers(), "batch", 0).second, 5);
}

// The first record is refused again when produced alone (as a record larger
// than the topic's max.message.bytes is, at every attempt): it alone is set
// aside, named with the broker's reason; its batch-mates are delivered.
TEST(DeliverySpoolTest, ARecordTheBrokerRefusesAloneIsSetAside) {
  auto cluster = StartCluster();
  ASSERT_NE(cluster, nullptr);
  DeliverySpool spool = OpenSpool(testing::MakeTempDir());
  // The batch's request, then the first record's alone.
  auto retry = RetryFiveRecordsAfterRefusals(*cluster, spool, 2);
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(retry->delivered, 4);
  EXPECT_EQ(retry->kept, 0);
  ASSERT_EQ(retry->refused.size(), 1u);
  EXPECT_EQ(retry->refused[0].count, 1);
  EXPECT_NE(retry->refused[0].reason.find("refused by the broker even alone"),
            std::string::npos)
      << retry->refused[0].reason;
  std::string content;
  ASSERT_TRUE(files::ReadWholeFile(retry->refused[0].file, &content).ok());
  EXPECT_NE(content.find("v0"), std::string::npos);
  EXPECT_EQ(content.find("v1"), std::string::npos);
  EXPECT_TRUE(ValuesIn(spool).empty());
  EXPECT_EQ(
      testing::Watermarks(cluster->bootstrap_servers(), "batch", 0).second, 4);
}

TEST(DeliverySpoolTest, RetryRefusesAProducerWithRecordsInFlight) {
  auto cluster = StartCluster();
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->SetBrokerDown(kAllBrokers).ok());
  DeliverySpool spool = OpenSpool(testing::MakeTempDir());
  auto producer = MakeProducer(cluster->bootstrap_servers(), seconds(120));
  ASSERT_NE(producer, nullptr);
  ASSERT_TRUE(producer->Produce("t", "k", "v").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      spool.Retry(*producer, milliseconds(100)).status()));
  auto kept = spool.KeepUndelivered(*producer, milliseconds(100));
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, 1);
}

}  // namespace
}  // namespace phaseloop::kafka
