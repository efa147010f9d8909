#include "common/kafka/embedded_cluster.h"

#include <librdkafka/rdkafka_mock.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace phaseloop::kafka {
namespace {

absl::Status MockStatus(rd_kafka_resp_err_t err, absl::string_view what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "embedded Kafka cluster: ", what, ": ", rd_kafka_err2str(err)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EmbeddedCluster>> EmbeddedCluster::Start(
    int brokers) {
  if (brokers < 1 || brokers > 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("embedded Kafka cluster: ", brokers,
                     " brokers requested; use 1 to 16"));
  }
  // The mock cluster needs a client instance for its bookkeeping; this one
  // never connects anywhere.
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  // Warnings and worse only: the handle has no bootstrap servers on purpose.
  if (rd_kafka_conf_set(conf, "client.id", "phaseloop-embedded-cluster", error,
                        sizeof error) != RD_KAFKA_CONF_OK ||
      rd_kafka_conf_set(conf, "log_level", "4", error, sizeof error) !=
          RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return absl::InternalError(
        absl::StrCat("embedded Kafka cluster: configuration: ", error));
  }
  // rd_kafka_new takes ownership of conf on success only.
  rd_kafka_t* handle =
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (handle == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InternalError(
        absl::StrCat("embedded Kafka cluster: creating its handle: ", error));
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(handle, brokers);
  if (cluster == nullptr) {
    rd_kafka_destroy(handle);
    return absl::UnavailableError(
        "embedded Kafka cluster: librdkafka could not start the mock brokers "
        "(no free loopback port?)");
  }
  std::unique_ptr<EmbeddedCluster> result(new EmbeddedCluster());
  result->brokers_ = brokers;
  result->handle_ = handle;
  result->cluster_ = cluster;
  result->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(cluster);
  return result;
}

EmbeddedCluster::~EmbeddedCluster() {
  if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
  if (handle_ != nullptr) rd_kafka_destroy(handle_);
}

absl::Status EmbeddedCluster::CreateTopic(absl::string_view topic,
                                          int partitions,
                                          int replication_factor) {
  if (partitions < 1 || replication_factor < 1 ||
      replication_factor > brokers_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "embedded Kafka cluster: topic ", topic, ": ", partitions,
        " partitions, replication factor ", replication_factor,
        "; need >= 1 partition and a replication factor in 1..", brokers_));
  }
  const std::string name(topic);
  return MockStatus(rd_kafka_mock_topic_create(cluster_, name.c_str(),
                                               partitions, replication_factor),
                    absl::StrCat("creating topic ", topic));
}

absl::Status EmbeddedCluster::PushRequestErrors(
    ApiKey api_key, const std::vector<rd_kafka_resp_err_t>& errors) {
  if (errors.empty()) return absl::OkStatus();
  rd_kafka_mock_push_request_errors_array(
      cluster_, static_cast<int16_t>(api_key), errors.size(), errors.data());
  return absl::OkStatus();
}

absl::Status EmbeddedCluster::PushBrokerRequestErrors(
    int32_t broker_id, ApiKey api_key,
    const std::vector<std::pair<rd_kafka_resp_err_t, int>>& errors_and_rtts) {
  // The 2.0.2 API is variadic only: push one (error, rtt) pair at a time,
  // which keeps their order (the stack is consumed first in, first out).
  for (const auto& [err, rtt_ms] : errors_and_rtts) {
    absl::Status pushed = MockStatus(
        rd_kafka_mock_broker_push_request_error_rtts(
            cluster_, broker_id, static_cast<int16_t>(api_key), 1, err, rtt_ms),
        absl::StrCat("pushing request errors to broker ", broker_id));
    if (!pushed.ok()) return pushed;
  }
  return absl::OkStatus();
}

void EmbeddedCluster::ClearRequestErrors(ApiKey api_key) {
  rd_kafka_mock_clear_request_errors(cluster_, static_cast<int16_t>(api_key));
}

absl::StatusOr<size_t> EmbeddedCluster::PendingBrokerRequestErrors(
    int32_t broker_id, ApiKey api_key) {
  size_t count = 0;
  absl::Status status = MockStatus(
      rd_kafka_mock_broker_error_stack_cnt(
          cluster_, broker_id, static_cast<int16_t>(api_key), &count),
      absl::StrCat("counting pending errors of broker ", broker_id));
  if (!status.ok()) return status;
  return count;
}

absl::Status EmbeddedCluster::SetBrokerDown(int32_t broker_id) {
  return MockStatus(rd_kafka_mock_broker_set_down(cluster_, broker_id),
                    absl::StrCat("setting broker ", broker_id, " down"));
}

absl::Status EmbeddedCluster::SetBrokerUp(int32_t broker_id) {
  return MockStatus(rd_kafka_mock_broker_set_up(cluster_, broker_id),
                    absl::StrCat("setting broker ", broker_id, " up"));
}

absl::Status EmbeddedCluster::SetRtt(int32_t broker_id, int rtt_ms) {
  return MockStatus(rd_kafka_mock_broker_set_rtt(cluster_, broker_id, rtt_ms),
                    absl::StrCat("setting the RTT of broker ", broker_id));
}

absl::Status EmbeddedCluster::SetPartitionLeader(absl::string_view topic,
                                                 int32_t partition,
                                                 int32_t broker_id) {
  const std::string name(topic);
  return MockStatus(rd_kafka_mock_partition_set_leader(cluster_, name.c_str(),
                                                       partition, broker_id),
                    absl::StrCat("moving the leader of ", topic, "/", partition,
                                 " to broker ", broker_id));
}

absl::Status EmbeddedCluster::SetGroupCoordinator(absl::string_view group_id,
                                                  int32_t broker_id) {
  const std::string name(group_id);
  return MockStatus(
      rd_kafka_mock_coordinator_set(cluster_, "group", name.c_str(), broker_id),
      absl::StrCat("setting the coordinator of group ", group_id));
}

}  // namespace phaseloop::kafka
