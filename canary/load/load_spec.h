#ifndef PHASELOOP_CANARY_LOAD_LOAD_SPEC_H_
#define PHASELOOP_CANARY_LOAD_LOAD_SPEC_H_

// What an open-loop load run sends (issue 17): the arrival rate and
// process, its bounds, the request mix, the per-request timeout and how many
// requests may be in flight. Plain values; ValidateLoadSpec says what is
// wrong with one, naming the field as configs/canary/load.yaml spells it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace phaseloop::canary::load {

// How intended send times are spaced: `kUniform` every 1/rate seconds,
// `kPoisson` exponential gaps of mean 1/rate drawn from the run's seed.
enum class Arrival { kUniform, kPoisson };

// "uniform" / "poisson".
const char* ArrivalName(Arrival arrival);

// One kind of request: `POST /v1/handle/<kind>` with a payload of
// [min_payload_bytes, max_payload_bytes] bytes (uniform, per request),
// chosen with probability weight / (sum of weights). The payload is
// text-like data drawn from `seed` (payload.h), so compression does real
// work and the same seed sends the same bytes.
struct MixEntry {
  std::string kind;
  double weight = 1;
  int64_t min_payload_bytes = 1024;
  int64_t max_payload_bytes = 1024;
  uint64_t seed = 1;
};

struct LoadSpec {
  double rate = 100;  // intended requests per second, > 0
  Arrival arrival = Arrival::kUniform;
  // Arrival times, kinds, payload sizes and targets are drawn from it.
  uint64_t seed = 1;
  // Bounds, at least one > 0: requests are intended only at times
  // < duration_s after the start, and at most max_requests of them. 0: no
  // such bound.
  double duration_s = 0;
  int64_t max_requests = 0;
  std::vector<MixEntry> mix;
  // Each request's own deadline, from when it is sent (its wait for a free
  // worker is not part of it but is part of its latency).
  double timeout_s = 5;
  // Requests in flight at once (one worker, and its keep-alive
  // connections, per slot). A request intended while every worker is busy
  // waits and starts late; its latency still counts from its intended time.
  int max_in_flight = 16;
  // A request that starts more than this after its intended time counts as
  // a late start.
  double late_threshold_s = 0.001;
};

// Limits that keep a run's memory and time bounded.
inline constexpr double kMaxRate = 1e6;
inline constexpr int kMaxInFlight = 4096;
inline constexpr int64_t kMaxPayloadBytes = int64_t{64} << 20;

// What is wrong with a spec: the field as the YAML spells it under load:
// (rate, duration_s, mix[0].kind, ...; "mix" for the mix as a whole) and
// the problem.
struct LoadSpecProblem {
  std::string field;
  std::string problem;
};

// The first bad field's problem; nullopt when the spec is valid.
std::optional<LoadSpecProblem> FindLoadSpecProblem(const LoadSpec& spec);

// OK, or InvalidArgument "FIELD: PROBLEM" (FindLoadSpecProblem's).
absl::Status ValidateLoadSpec(const LoadSpec& spec);

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_LOAD_SPEC_H_
