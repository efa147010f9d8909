#ifndef PHASELOOP_COMMON_KAFKA_TOPICS_H_
#define PHASELOOP_COMMON_KAFKA_TOPICS_H_

// Every Kafka topic phaseloop uses, its key and its value, in one place.
//
// Keys choose the partition (librdkafka's murmur2 partitioner, the same
// mapping as Java clients), so every record of one key lands in one
// partition, in order, and is read by one member of a consumer group. Keys
// are also what makes outputs idempotent: a replayed record has the same key
// and overwrites (design card, "Effectively-once rewards").
// Composite keys join their parts with '/', so parts must not contain '/'.
//
// Nothing here assumes the embedded cluster: against a real cluster, create
// these topics (or allow auto-creation) with at least as many partitions as
// the largest consumer group that reads them.

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace phaseloop::kafka {

// Search jobs for the search workers' consumer group (issue 4).
// key: job_id. value: a search job (module, strategy, budget).
inline constexpr absl::string_view kSearchJobsTopic = "phaseloop.search.jobs";

// Episodes produced by search workers, ingested by the replay buffer.
// key: module_hash. value: an episode (steps, actions, rewards, propensities).
inline constexpr absl::string_view kSearchEpisodesTopic =
    "phaseloop.search.episodes";

// Compile decisions: phaseloop-cc's spooled records, produced by
// `phaseloop decisions ship --kafka` (a CI job, the canary's builds) and
// consumed by `phaseloop buffer ingest` into the replay buffer.
// key: decision_id (DecisionKey), the id the buffer upserts decisions by, so
// a record shipped or delivered twice is stored once (and a compacted topic
// keeps one copy). value: a serialized phaseloop.v1.Decision.
inline constexpr absl::string_view kDecisionsTopic = "phaseloop.decisions";

// Per-instance, per-window latency SLIs of services (issue 6).
// key: service. value: phaseloop.v1.SliWindow. Keyed by service alone so
// that every group of a service (baseline and canary) lands in one
// partition, read by one reward engine of the consumer group, which can
// then compare them.
inline constexpr absl::string_view kSliTopic = "phaseloop.sli";

// Rewards computed by the reward engine.
// key: service/group/deployment_id/window_start_ms (one reward per group of
// a deployment and window, so a replay overwrites it and no two groups
// collide). value: a reward record.
inline constexpr absl::string_view kRewardsTopic = "phaseloop.rewards";

// SLI windows that arrived after the watermark passed their window.
// key: service (as in phaseloop.sli). value: the late SliWindow.
inline constexpr absl::string_view kRewardsLateTopic = "phaseloop.rewards.late";

// Error budget remaining and burn rates per SLO and group.
// key: service/group/slo_name (one key per status a reader keeps, so the
// topic may be compacted). value: a budget status record.
inline constexpr absl::string_view kBudgetTopic = "phaseloop.budget";

// Malformed or unjoinable input, with the reason.
// key: the original record's key ("topic/partition" for a lost range).
// value: a v1::DeadLetter (dead_letter.h): the original bytes with the
// source topic, partition, offset, reason and consumer.
inline constexpr absl::string_view kDeadLetterTopic = "phaseloop.deadletter";

// All of the above, e.g. to create them on a cluster.
inline constexpr absl::string_view kAllTopics[] = {
    kSearchJobsTopic, kSearchEpisodesTopic, kDecisionsTopic, kSliTopic,
    kRewardsTopic,    kRewardsLateTopic,    kBudgetTopic,    kDeadLetterTopic,
};

// Key of phaseloop.sli and phaseloop.rewards.late records.
inline std::string SliKey(absl::string_view service) {
  return std::string(service);
}

// Key of phaseloop.rewards records.
inline std::string RewardKey(absl::string_view service, absl::string_view group,
                             absl::string_view deployment_id,
                             int64_t window_start_ms) {
  return absl::StrCat(service, "/", group, "/", deployment_id, "/",
                      window_start_ms);
}

// Key of phaseloop.decisions records.
inline std::string DecisionKey(absl::string_view decision_id) {
  return std::string(decision_id);
}

// Key of phaseloop.budget records.
inline std::string BudgetKey(absl::string_view service, absl::string_view group,
                             absl::string_view slo_name) {
  return absl::StrCat(service, "/", group, "/", slo_name);
}

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_TOPICS_H_
