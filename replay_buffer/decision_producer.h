#ifndef PHASELOOP_REPLAY_BUFFER_DECISION_PRODUCER_H_
#define PHASELOOP_REPLAY_BUFFER_DECISION_PRODUCER_H_

// The sending end of the buffer's decision input: compile decisions
// (phaseloop.v1.Decision) produced to phaseloop.decisions, keyed by
// decision_id (kafka::DecisionKey), for `phaseloop buffer ingest`
// (kafka_ingest.h) to store. `phaseloop decisions ship --kafka` and the
// canary's handler builds call it; the compile path (compiler_driver/) does
// not link Kafka, so the phaseloop binary hands this function to
// `decisions ship` when it registers the command.
//
// Delivery: an idempotent producer (common/kafka/producer.h); every record's
// delivery report is waited for. A batch counts as delivered only when every
// record of it was acknowledged. Sending a batch again is harmless: the key
// is the id the buffer upserts by, so the buffer stores each decision once.

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/kafka/topics.h"
#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::replay_buffer {

// Produces every decision of every batch to `topic` on `bootstrap` and
// waits for the delivery reports (each record retried by librdkafka for up
// to `delivery_timeout`). Returns one status per batch, in order: OK when
// every record of that batch was acknowledged; else the first failure, its
// message naming the topic and the cluster. A producer that cannot be
// created fails every batch. Thread-compatible (a producer per call).
std::vector<absl::Status> ProduceDecisionBatches(
    const std::string& bootstrap,
    const std::vector<const v1::DecisionBatch*>& batches,
    std::chrono::milliseconds delivery_timeout = std::chrono::seconds(30),
    const std::string& topic = std::string(kafka::kDecisionsTopic));

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_DECISION_PRODUCER_H_
