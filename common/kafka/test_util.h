#ifndef PHASELOOP_COMMON_KAFKA_TEST_UTIL_H_
#define PHASELOOP_COMMON_KAFKA_TEST_UTIL_H_

// Helpers for common/kafka's tests.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/kafka/consumer.h"
#include "common/testing/test_util.h"

namespace phaseloop::kafka::testing {

// Group settings that make joins and rebalances quick (valid on any
// cluster; the defaults suit production). The 2.0.2 mock delays a rebalance
// by session.timeout.ms - 1 s, and expires members waiting out its 3 s
// initial join delay if session.timeout.ms is shorter than about 4 s.
std::map<std::string, std::string> QuickGroupConfig();

// Consumer options for `group` subscribed to `topics` with QuickGroupConfig.
ConsumerOptions GroupOptions(const std::string& bootstrap,
                             const std::string& group,
                             std::vector<std::string> topics);

// Polls the consumers in turn (rebalance callbacks run inside Poll, so every
// member of a group must be polled) until `count` records arrived in total or
// `timeout` passed; records come out grouped by consumer index. Retriable
// errors are tolerated, others fail the test.
std::vector<std::vector<ConsumedMessage>> ConsumeFrom(
    const std::vector<Consumer*>& consumers, size_t count,
    std::chrono::milliseconds timeout);

// Polls until every consumer has a non-empty assignment and together they
// hold `partitions` partitions (or `timeout` passes; returns whether they did).
bool WaitForAssignments(const std::vector<Consumer*>& consumers,
                        size_t partitions, std::chrono::milliseconds timeout);

// The low (log start) and high watermarks of topic/partition, asked from the
// leader through a client of its own (-1, -1 on failure, which fails the
// test).
std::pair<int64_t, int64_t> Watermarks(const std::string& bootstrap,
                                       const std::string& topic,
                                       int32_t partition);

// Produces `count` records of `value_bytes` bytes each (keys "key-i") to
// `topic` (partitioned by key: give it one partition to fill one) and waits
// for every delivery. Enough of them overflow
// what the embedded cluster keeps per partition (see embedded_cluster.h).
void ProduceBulk(const std::string& bootstrap, const std::string& topic,
                 int count, size_t value_bytes);

// Running a binary and temp dirs: common/testing's, under this namespace for
// the Kafka tests that call them unqualified.
using ::phaseloop::testing::MakeTempDir;
using ::phaseloop::testing::RunCommand;

}  // namespace phaseloop::kafka::testing

#endif  // PHASELOOP_COMMON_KAFKA_TEST_UTIL_H_
