#ifndef PHASELOOP_CANARY_LOAD_LOAD_RESULTS_H_
#define PHASELOOP_CANARY_LOAD_LOAD_RESULTS_H_

// What a load run measured, per target and overall, for the whole run or
// for one time slice (the controller judges each traffic step on its own).
// Latencies are counted from each request's *intended* send time, so time a
// request spent waiting for a free worker (or behind a stalled server) is
// part of it: no coordinated omission. Latency sketches are the SLI
// pipeline's (reward_engine/sli), relative error 0.5 %.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reward_engine/sli/latency_sketch.h"

namespace phaseloop::canary::load {

// Reason of requests still queued when the run ended (stopped, or past its
// drain time): intended, never sent.
inline constexpr char kErrorNotSent[] = "not_sent";

// Seconds; all 0 for an empty sketch.
struct LatencySummary {
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;
};
LatencySummary Summarize(const sli::LatencySketch& sketch);

struct TargetResults {
  std::string name;
  int64_t intended = 0;  // routed here (their intended time has come)
  int64_t sent = 0;      // started: written to a connection
  int64_t ok = 0;        // 2xx answers
  std::map<std::string, int64_t> errors;  // by reason (http_connection.h)
  // 2xx answers' latency from the intended send time, in seconds.
  sli::LatencySketch latency;
  // Every sent request's start minus its intended time, in seconds.
  sli::LatencySketch start_delay;
  // Sent requests whose start_delay exceeded the spec's late threshold.
  int64_t late_starts = 0;

  int64_t error_count() const;
  // Finished: ok + errors (not_sent included).
  int64_t done() const { return ok + error_count(); }
  // Adds `other`'s counts and sketches (same sketch accuracy).
  void Merge(const TargetResults& other);
};

struct LoadResults {
  // Wall time the figures cover: since the start (or the previous slice)
  // until now, or until the run ended.
  double elapsed_s = 0;
  std::vector<TargetResults> targets;  // in the TargetSet's order
  TargetResults overall;               // every target's, merged

  // Finished requests per second over elapsed_s (0 when none elapsed).
  double AchievedRate(const TargetResults& r) const;
};

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_LOAD_RESULTS_H_
