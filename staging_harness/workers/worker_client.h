#ifndef PHASELOOP_STAGING_HARNESS_WORKERS_WORKER_CLIENT_H_
#define PHASELOOP_STAGING_HARNESS_WORKERS_WORKER_CLIENT_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/compilation_session.grpc.pb.h"

namespace phaseloop::service {

struct WorkerOptions {
  // Spawn a local worker from this binary (phaseloop-session-worker) ...
  std::string worker_binary;
  std::vector<std::string> worker_args;  // extra flags, e.g. fault injection
  // ... or connect to a running one ("host:port", "unix:path"); a remote
  // worker cannot be restarted from here, so a crash there is Unavailable.
  std::string address;
  std::chrono::milliseconds call_timeout{60000};
  std::chrono::milliseconds start_timeout{20000};
};

// One worker process and a channel to it. Restart() kills it (if alive) and
// starts a fresh one; `generation()` counts starts so sessions can tell their
// server-side state is gone. Not thread-safe.
class WorkerProcess {
 public:
  static absl::StatusOr<std::unique_ptr<WorkerProcess>> Start(
      const WorkerOptions& options);
  ~WorkerProcess();

  absl::Status Restart();
  // Kills the worker if it is still running (after a timeout).
  void Kill();
  bool can_restart() const { return !options_.worker_binary.empty(); }
  int generation() const { return generation_; }
  pid_t pid() const { return pid_; }
  const WorkerOptions& options() const { return options_; }
  v1::CompilationSessionService::Stub& stub() { return *stub_; }

 private:
  explicit WorkerProcess(WorkerOptions options)
      : options_(std::move(options)) {}
  absl::Status Launch();

  WorkerOptions options_;
  pid_t pid_ = -1;
  std::string socket_path_;
  int generation_ = 0;
  std::unique_ptr<v1::CompilationSessionService::Stub> stub_;
};

// A compilation session living in a worker. If an action crashes or hangs the
// worker, the worker is restarted, this session's state is restored by
// replaying its history, and Step returns a typed error naming the action:
//   Aborted           — the action crashed the worker,
//   DeadlineExceeded  — the action did not finish within call_timeout,
//   InvalidArgument / Internal — the worker rejected it (bad index, verifier).
// In every case the state is the history before the failing action.
class RemoteSession {
 public:
  static absl::StatusOr<std::unique_ptr<RemoteSession>> Start(
      WorkerProcess& worker, v1::ModuleSource source,
      const std::vector<v1::ObservationKind>& observe = {},
      v1::StartSessionReply* reply = nullptr);
  ~RemoteSession();

  absl::StatusOr<v1::StepReply> Step(
      const std::vector<int>& actions,
      const std::vector<v1::ObservationKind>& observe = {});
  absl::StatusOr<v1::ObserveReply> Observe(
      const std::vector<v1::ObservationKind>& observe);
  absl::StatusOr<std::unique_ptr<RemoteSession>> Fork();

  const std::vector<int>& history() const { return history_; }
  // The action named by the last Aborted/DeadlineExceeded error.
  int last_failed_action() const { return last_failed_action_; }

 private:
  RemoteSession(WorkerProcess& worker, v1::ModuleSource source)
      : worker_(worker), source_(std::move(source)) {}
  // Re-creates the server-side session (history replayed) if the worker
  // restarted since it was made.
  absl::Status EnsureLive();
  absl::Status Recreate();
  // One Step RPC; maps a dead or stuck worker to Aborted/DeadlineExceeded
  // after restarting it.
  absl::StatusOr<v1::StepReply> CallStep(
      const std::vector<int>& actions,
      const std::vector<v1::ObservationKind>& observe);

  WorkerProcess& worker_;
  v1::ModuleSource source_;
  int64_t session_id_ = 0;
  int generation_ = -1;
  std::vector<int> history_;
  int last_failed_action_ = -1;
};

}  // namespace phaseloop::service

#endif  // PHASELOOP_STAGING_HARNESS_WORKERS_WORKER_CLIENT_H_
