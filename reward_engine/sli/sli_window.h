#ifndef PHASELOOP_REWARD_ENGINE_SLI_SLI_WINDOW_H_
#define PHASELOOP_REWARD_ENGINE_SLI_SLI_WINDOW_H_

// The rules every v1::SliWindow obeys, checked wherever windows enter
// phaseloop (`phaseloop sli send`, the reward engine's consumer), and the
// conversions between a window and its LatencySketch.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "phaseloop/v1/sli.pb.h"
#include "reward_engine/sli/latency_sketch.h"

namespace phaseloop::sli {

// Longest window accepted: one day.
inline constexpr int64_t kMaxWindowLengthMs = int64_t{24} * 3600 * 1000;
// Latest window start accepted: the year 9999 (Unix milliseconds), far
// from where a start plus a length overflows.
inline constexpr int64_t kMaxWindowStartMs = int64_t{253402300799999};

// OK, or InvalidArgument whose message starts with the first offending field
// ("service", "window_start_ms", "sketch.counts[3]", ...) and says what is
// wrong. The rules: service, group, instance, deployment_id and
// policy_version are non-empty (service and group without '/', they form
// the Kafka key); 0 < window_length_ms <= kMaxWindowLengthMs; window_start_ms
// in [0, kMaxWindowStartMs] and a multiple of window_length_ms; 0 <=
// error_count <= count; the sketch is well formed, of relative accuracy
// kDefaultRelativeAccuracy, holds `count` values, and agrees with sum/min/max
// (see LatencySketch::SetExactStats); an error_sketch, when present, is well
// formed, of the same accuracy, holds error_count values, and above any
// latency holds no more than the sketch (the failures are some of the
// requests).
absl::Status ValidateSliWindow(const v1::SliWindow& window);

struct WindowLatencies {
  LatencySketch all;       // every request's latency, with exact statistics
  LatencySketch failures;  // the error_sketch; empty when the window has none
};

// The window's sketches; the window is validated first (errors as
// ValidateSliWindow).
absl::StatusOr<WindowLatencies> WindowSketches(const v1::SliWindow& window);
// WindowSketches(window).all.
absl::StatusOr<LatencySketch> WindowSketch(const v1::SliWindow& window);

// Sets count, sum_seconds, min_seconds, max_seconds and sketch of `window`
// from `sketch`.
void SetWindowSketch(const LatencySketch& sketch, v1::SliWindow* window);

}  // namespace phaseloop::sli

#endif  // PHASELOOP_REWARD_ENGINE_SLI_SLI_WINDOW_H_
