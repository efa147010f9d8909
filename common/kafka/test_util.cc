#include "common/kafka/test_util.h"

#include <librdkafka/rdkafkacpp.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/producer.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka::testing {

std::map<std::string, std::string> QuickGroupConfig() {
  return {
      {"session.timeout.ms", "4000"},
      {"heartbeat.interval.ms", "300"},
      {"fetch.wait.max.ms", "100"},
  };
}

ConsumerOptions GroupOptions(const std::string& bootstrap,
                             const std::string& group,
                             std::vector<std::string> topics) {
  ConsumerOptions options;
  options.bootstrap_servers = bootstrap;
  options.group_id = group;
  options.topics = std::move(topics);
  options.config = QuickGroupConfig();
  return options;
}

std::vector<std::vector<ConsumedMessage>> ConsumeFrom(
    const std::vector<Consumer*>& consumers, size_t count,
    std::chrono::milliseconds timeout) {
  std::vector<std::vector<ConsumedMessage>> received(consumers.size());
  size_t total = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (total < count && std::chrono::steady_clock::now() < deadline) {
    for (size_t i = 0; i < consumers.size(); ++i) {
      auto message = consumers[i]->Poll(std::chrono::milliseconds(50));
      if (!message.ok()) {
        EXPECT_EQ(ClassOf(message.status()), ErrorClass::kRetriable)
            << message.status();
        continue;
      }
      if (message->has_value()) {
        received[i].push_back(std::move(**message));
        ++total;
      }
    }
  }
  return received;
}

bool WaitForAssignments(const std::vector<Consumer*>& consumers,
                        size_t partitions, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    size_t held = 0;
    bool all_hold_some = true;
    for (Consumer* consumer : consumers) {
      auto message = consumer->Poll(std::chrono::milliseconds(50));
      EXPECT_TRUE(!message.ok() || !message->has_value())
          << "a record arrived while waiting for the group to settle";
      const size_t assigned = consumer->Assignment().size();
      held += assigned;
      all_hold_some = all_hold_some && assigned > 0;
    }
    if (all_hold_some && held == partitions) return true;
  }
  return false;
}

std::pair<int64_t, int64_t> Watermarks(const std::string& bootstrap,
                                       const std::string& topic,
                                       int32_t partition) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  EXPECT_EQ(conf->set("bootstrap.servers", bootstrap, error),
            RdKafka::Conf::CONF_OK)
      << error;
  std::unique_ptr<RdKafka::Producer> client(
      RdKafka::Producer::create(conf.get(), error));
  EXPECT_NE(client, nullptr) << error;
  if (client == nullptr) return {-1, -1};
  int64_t low = -1;
  int64_t high = -1;
  RdKafka::ErrorCode err =
      client->query_watermark_offsets(topic, partition, &low, &high, 10000);
  EXPECT_EQ(err, RdKafka::ERR_NO_ERROR) << RdKafka::err2str(err);
  return {low, high};
}

void ProduceBulk(const std::string& bootstrap, const std::string& topic,
                 int count, size_t value_bytes) {
  ProducerOptions options;
  options.bootstrap_servers = bootstrap;
  auto producer = Producer::Create(options);
  ASSERT_TRUE(producer.ok()) << producer.status();
  const std::string value(value_bytes, 'x');
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(
        (*producer)->Produce(topic, absl::StrCat("key-", i), value).ok());
  }
  ASSERT_TRUE((*producer)->Flush(std::chrono::seconds(30)).ok());
}

}  // namespace phaseloop::kafka::testing
