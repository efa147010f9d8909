#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_EPISODE_SINK_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_EPISODE_SINK_H_

#include "absl/status/status.h"
#include "phaseloop/v1/episode.pb.h"

namespace phaseloop::search {

// Where search episodes go: the role every episode store plays for the search.
// Implementations: FileEpisodeSink (an episode file, episode_file.h), and
// BufferEpisodeSink (the replay buffer) and KafkaEpisodeSink (the episodes
// topic) in staging_harness/results/stored_episode_sinks.h.
//
// Contract:
//  - Write stores one whole episode or nothing: a reader never sees part of
//    an episode, even if the writer crashes during the call.
//  - After Flush returns OK, every episode written before it survives a crash
//    of the writer (and, for durable stores, of the machine).
//  - An error leaves the episodes stored before it intact; the caller decides
//    whether to go on.
//  - Implementations need not be thread-safe: callers serialise Write/Flush.
class EpisodeSink {
 public:
  virtual ~EpisodeSink() = default;

  virtual absl::Status Write(const v1::Episode& episode) = 0;
  virtual absl::Status Flush() = 0;
};

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_EPISODE_SINK_H_
