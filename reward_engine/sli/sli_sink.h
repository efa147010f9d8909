#ifndef PHASELOOP_REWARD_ENGINE_SLI_SLI_SINK_H_
#define PHASELOOP_REWARD_ENGINE_SLI_SLI_SINK_H_

// SliSink: where closed SLI windows go (the role the recorder's flusher and
// `phaseloop sli send` publish to). The production implementation produces
// to Kafka topic phaseloop.sli with key "service" (kafka::SliKey); tests
// collect.

#include "absl/status/status.h"
#include "phaseloop/v1/sli.pb.h"

namespace phaseloop::sli {

class SliSink {
 public:
  virtual ~SliSink() = default;
  // Publishes one window. An error means it was not (or not certainly)
  // published; callers retry later, so a window may arrive twice and
  // consumers de-duplicate by (service, group, instance, window_start_ms).
  // Each publisher calls it from one thread at a time.
  virtual absl::Status Publish(const v1::SliWindow& window) = 0;
};

}  // namespace phaseloop::sli

#endif  // PHASELOOP_REWARD_ENGINE_SLI_SLI_SINK_H_
