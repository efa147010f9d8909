#ifndef PHASELOOP_COMMON_KAFKA_EMBEDDED_CLUSTER_H_
#define PHASELOOP_COMMON_KAFKA_EMBEDDED_CLUSTER_H_

// The embedded Kafka cluster: librdkafka's mock cluster (a real Kafka
// protocol broker set on loopback TCP, in this process) for one-machine use
// (`phaseloop kafka serve`) and tests, with the fault-injection hooks the
// fault tests use. Clients never know they talk to it: they get its
// bootstrap address like any other cluster's.
//
// librdkafka 2.0.2 mock-cluster limits: no admin API (topics
// auto-create with 4 partitions, or CreateTopic), no SSL/SASL, no
// transaction markers, data kept in memory only.
//
// Retention is fixed, not configurable: each partition keeps at most
// kMockPartitionMaxBytes of record batches (as produced: ~1.2 KB per 1 KB
// record) and at most kMockPartitionMaxBatches batches. Appending past either
// drops the oldest whole batches, at once and without a word to producers;
// the partition's log start offset (low watermark) moves up to the first
// batch kept, and at least one batch is always kept. The limits are set in
// librdkafka's rd_kafka_mock_partition_init; 2.0.2 has no function or
// property to change them (its only `test.mock.*` properties are
// num.brokers and broker.rtt) and no time-based retention. Measured
// (consumer_test): 8,000 records of 1,024-byte values to one partition leave
// the last ~4,160 (a little more or less with how the producer batched
// them). Consumers report
// records deleted before they read them (consumer.h); for more than a few
// MB per partition of unread backlog, use a real cluster or more partitions.
//
// Thread-safety: every method may be called from any thread; the cluster runs
// on its own librdkafka threads. Destroying it stops the brokers (connected
// clients see the brokers go down).

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

typedef struct rd_kafka_mock_cluster_s rd_kafka_mock_cluster_t;

namespace phaseloop::kafka {

// Kafka protocol request types, for injecting errors into one kind of
// request.
enum class ApiKey : int16_t {
  kProduce = 0,
  kFetch = 1,
  kListOffsets = 2,
  kMetadata = 3,
  kOffsetCommit = 8,
  kOffsetFetch = 9,
  kFindCoordinator = 10,
  kJoinGroup = 11,
  kHeartbeat = 12,
  kLeaveGroup = 13,
  kSyncGroup = 14,
  kApiVersions = 18,
  kInitProducerId = 22,
};

// What a partition of the embedded cluster keeps (see above).
inline constexpr int64_t kMockPartitionMaxBytes = 5 * 1024 * 1024;
inline constexpr int64_t kMockPartitionMaxBatches = 100000;

// A broker id (1..brokers), or kAllBrokers where a method allows it.
inline constexpr int32_t kAllBrokers = -1;

class EmbeddedCluster {
 public:
  // Starts `brokers` (1..16) brokers listening on 127.0.0.1, ephemeral ports.
  static absl::StatusOr<std::unique_ptr<EmbeddedCluster>> Start(int brokers);

  ~EmbeddedCluster();
  EmbeddedCluster(const EmbeddedCluster&) = delete;
  EmbeddedCluster& operator=(const EmbeddedCluster&) = delete;

  // "127.0.0.1:PORT,127.0.0.1:PORT,...": what clients take as --kafka.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }
  int brokers() const { return brokers_; }

  // Creates `topic` with `partitions` partitions, replicated on
  // `replication_factor` (<= brokers) brokers. Creating an existing topic is
  // an error from the mock; create topics before clients use them.
  absl::Status CreateTopic(absl::string_view topic, int partitions,
                           int replication_factor);

  // --- Fault injection ---

  // The next `errors.size()` requests of type `api_key` to any broker fail
  // with these errors, in order. RD_KAFKA_RESP_ERR__TRANSPORT makes the
  // broker close the connection instead of answering.
  absl::Status PushRequestErrors(
      ApiKey api_key, const std::vector<rd_kafka_resp_err_t>& errors);
  // The same for one broker, each entry an (error, response delay in ms)
  // pair; error RD_KAFKA_RESP_ERR_NO_ERROR with a delay handles the request
  // normally but answers late (e.g. later than the client's request timeout,
  // so the client retries a request the broker did apply).
  absl::Status PushBrokerRequestErrors(
      int32_t broker_id, ApiKey api_key,
      const std::vector<std::pair<rd_kafka_resp_err_t, int>>& errors_and_rtts);
  // Forgets cluster-wide errors pushed for `api_key` that have not fired.
  void ClearRequestErrors(ApiKey api_key);
  // How many errors pushed to `broker_id` for `api_key` have not fired yet.
  absl::StatusOr<size_t> PendingBrokerRequestErrors(int32_t broker_id,
                                                    ApiKey api_key);

  // Disconnects a broker (or kAllBrokers) and refuses new connections. Does
  // not move partition leadership (use SetPartitionLeader).
  absl::Status SetBrokerDown(int32_t broker_id);
  absl::Status SetBrokerUp(int32_t broker_id);
  // Delays every response of a broker (or kAllBrokers) by `rtt_ms`.
  absl::Status SetRtt(int32_t broker_id, int rtt_ms);
  // Makes `broker_id` the leader of a partition (-1: leaderless); creates the
  // topic if needed. Clients find out through their metadata refresh.
  absl::Status SetPartitionLeader(absl::string_view topic, int32_t partition,
                                  int32_t broker_id);
  // Makes `broker_id` the coordinator of consumer group `group_id`.
  absl::Status SetGroupCoordinator(absl::string_view group_id,
                                   int32_t broker_id);

 private:
  EmbeddedCluster() = default;

  int brokers_ = 0;
  std::string bootstrap_servers_;
  rd_kafka_t* handle_ = nullptr;                // owned; destroyed last
  rd_kafka_mock_cluster_t* cluster_ = nullptr;  // owned
};

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_EMBEDDED_CLUSTER_H_
