#ifndef PHASELOOP_REPLAY_BUFFER_KAFKA_INGEST_TEST_UTIL_H_
#define PHASELOOP_REPLAY_BUFFER_KAFKA_INGEST_TEST_UTIL_H_

// What the ingest's tests share: the topics, episodes and decisions to
// produce, a quickly settling ingest, and the dead letters read back.

#include <memory>
#include <string>
#include <vector>

#include "common/kafka/embedded_cluster.h"
#include "common/kafka/producer.h"
#include "phaseloop/v1/decision.pb.h"
#include "phaseloop/v1/reward.pb.h"
#include "replay_buffer/kafka_ingest.h"

namespace phaseloop::replay_buffer::ingest_test {

inline constexpr char kTopic[] = "phaseloop.search.episodes";
inline constexpr char kDecisions[] = "phaseloop.decisions";

// An embedded cluster holding `topic` and the dead-letter topic, one
// partition each; nullptr (the test failed) when it cannot start.
std::unique_ptr<kafka::EmbeddedCluster> ClusterWithDeadLetters(
    const std::string& topic);

// A producer to `bootstrap` with the default settings; nullptr (the test
// failed) when it cannot be made.
std::unique_ptr<kafka::Producer> MakeProducer(const std::string& bootstrap);

// Episodes "episode-<i>" for i in [first, first + count) to kTopic, keyed by
// module (ten modules), flushed; a failure fails the test.
void ProduceEpisodes(kafka::Producer& producer, int first, int count);

// Ingest of kTopic that stops 2.5 s after the last record, in a quickly
// settling consumer group.
IngestOptions QuickIngestOptions(const std::string& bootstrap);

// The dead letters on the topic, parsed (`count` of them, or the test
// fails).
std::vector<v1::DeadLetter> ReadDeadLetters(const std::string& bootstrap,
                                            size_t count);

// `files` spool-file-like batches of `per_file` decisions each, ids
// "decision-<file>-<i>".
std::vector<v1::DecisionBatch> DecisionBatches(int files, int per_file);

std::vector<const v1::DecisionBatch*> Pointers(
    const std::vector<v1::DecisionBatch>& batches);

}  // namespace phaseloop::replay_buffer::ingest_test

#endif  // PHASELOOP_REPLAY_BUFFER_KAFKA_INGEST_TEST_UTIL_H_
