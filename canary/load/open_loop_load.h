#ifndef PHASELOOP_CANARY_LOAD_OPEN_LOOP_LOAD_H_
#define PHASELOOP_CANARY_LOAD_OPEN_LOOP_LOAD_H_

// The open-loop load generator (issue 17). Requests are *intended* at fixed
// times — every 1/rate s, or at Poisson arrivals — whatever the server does:
// a scheduler thread hands each one, at its intended time, to a queue that
// max_in_flight workers drain over keep-alive HTTP/1.1 connections. When
// every worker is busy a request waits, and its latency still counts from
// its intended time, so a stalled server shows as the queueing delay its
// users would see (closed-loop generators, which wait for a reply before
// the next send, hide it: coordinated omission, Tene).
//
// Each request's kind and payload size come from the spec's mix, and its
// target from a seeded weighted choice over the TargetSet's weights at its
// intended time; SetWeights shifts the split while the run goes on.
//
// Bounds: no request is intended at or after duration_s, nor beyond
// max_requests. Once the last is intended, the workers drain the queue for
// at most timeout_s more; requests still queued then (or when Stop is
// called) are counted as errors "not_sent". A run therefore lasts at most
// duration_s (or max_requests / rate) + 2 × timeout_s.
//
// Thread-safety: every method may be called from any thread.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "canary/load/http_connection.h"
#include "canary/load/load_results.h"
#include "canary/load/load_spec.h"
#include "canary/load/targets.h"

namespace phaseloop::canary::load {

class OpenLoopLoad {
 public:
  // Validates `spec` and the targets (InvalidArgument naming the field or
  // target), resolves the targets' addresses, builds the payloads and
  // starts sending. Targets need not be up: refused connections are counted.
  // `targets` is copied: shift the split with SetWeights below.
  static absl::StatusOr<std::unique_ptr<OpenLoopLoad>> Start(
      LoadSpec spec, const TargetSet& targets);

  // Stops (as Stop) and waits for the threads.
  ~OpenLoopLoad();
  OpenLoopLoad(const OpenLoopLoad&) = delete;
  OpenLoopLoad& operator=(const OpenLoopLoad&) = delete;

  // Shifts the traffic split for requests intended from now on (TargetSet).
  absl::Status SetWeights(
      const std::vector<std::pair<std::string, double>>& weights);
  std::vector<Target> targets() const { return targets_.targets(); }

  // Ends the run early: nothing more is intended, queued requests count as
  // "not_sent", requests in flight finish (within their timeout). Returns
  // at once; Wait returns when the workers are done.
  void Stop();
  // Blocks until the run has ended.
  void Wait();
  // Waits at most `timeout`; true when the run has ended.
  bool WaitFor(std::chrono::milliseconds timeout);

  // Results since the start.
  LoadResults Snapshot() const;
  // Results since the previous TakeSlice (or the start), and starts a new
  // slice: what the controller reads at the end of each traffic step.
  LoadResults TakeSlice();

 private:
  // A request whose intended time has come.
  struct Request {
    int target;
    int kind;  // index into spec_.mix
    size_t payload_offset;
    size_t payload_size;
    Clock::time_point intended;
  };

  OpenLoopLoad(LoadSpec spec, const TargetSet& targets);
  void Schedule();
  void Work();
  // Blocks for the next request; false when the run is over.
  bool Next(Request& request, bool& send);
  void RecordStart(int target, double delay_s);
  void RecordDone(int target, const HttpOutcome& outcome, double latency_s);
  void RecordNotSent(int target);
  LoadResults Results(const std::vector<TargetResults>& from,
                      Clock::time_point since) const;

  const LoadSpec spec_;
  TargetSet targets_;
  std::vector<Endpoint> endpoints_;
  std::vector<std::string> paths_;     // per mix entry
  std::vector<std::string> payloads_;  // per mix entry: a pool to slice
  Clock::time_point start_;

  mutable std::mutex queue_mutex_;
  std::condition_variable queue_changed_;   // workers wait on it
  std::condition_variable stop_requested_;  // the scheduler waits on it
  std::condition_variable ended_changed_;   // Wait waits on it
  std::deque<Request> queue_;               // guarded by queue_mutex_
  bool stopping_ = false;                   // guarded by queue_mutex_
  bool schedule_done_ = false;              // guarded by queue_mutex_
  Clock::time_point drain_until_;  // guarded; valid once schedule_done_
  int workers_running_ = 0;        // guarded by queue_mutex_
  Clock::time_point ended_;        // guarded; valid once workers_running_ 0

  mutable std::mutex results_mutex_;
  std::vector<TargetResults> total_;  // guarded by results_mutex_
  std::vector<TargetResults> slice_;  // guarded by results_mutex_
  Clock::time_point slice_start_;     // guarded by results_mutex_

  std::thread scheduler_;
  std::vector<std::thread> workers_;
};

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_OPEN_LOOP_LOAD_H_
