#include "staging_harness/workers/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"

namespace phaseloop::service {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(
    std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

// The worker died or stopped answering (as opposed to rejecting a request).
bool WorkerLost(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         status.error_code() == grpc::StatusCode::CANCELLED;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(
    const WorkerOptions& options) {
  if (options.worker_binary.empty() && options.address.empty()) {
    return absl::InvalidArgumentError(
        "a worker needs a binary to spawn or an address to connect to");
  }
  std::unique_ptr<WorkerProcess> worker(new WorkerProcess(options));
  if (absl::Status s = worker->Launch(); !s.ok()) return s;
  return worker;
}

WorkerProcess::~WorkerProcess() { Kill(); }

void WorkerProcess::Kill() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  if (!socket_path_.empty()) unlink(socket_path_.c_str());
}

absl::Status WorkerProcess::Restart() {
  if (!can_restart()) {
    return absl::UnavailableError(
        absl::StrCat("worker at ", options_.address,
                     " is gone and cannot be restarted from here"));
  }
  Kill();
  return Launch();
}

absl::Status WorkerProcess::Launch() {
  ++generation_;
  std::string target = options_.address;
  if (!options_.worker_binary.empty()) {
    static std::atomic<int> counter{0};
    const char* tmp = getenv("TMPDIR");
    socket_path_ = absl::StrCat(tmp ? tmp : "/tmp", "/phaseloop-worker-",
                                getpid(), "-", counter++, ".sock");
    unlink(socket_path_.c_str());
    int out[2];
    // Close-on-exec: workers started by other threads must not inherit it
    // (dup2 below gives this worker its own, inheritable, copy as stdout).
    if (pipe2(out, O_CLOEXEC) != 0)
      return absl::InternalError("pipe2() failed");
    std::vector<std::string> args = {options_.worker_binary, "--listen",
                                     "unix:" + socket_path_};
    args.insert(args.end(), options_.worker_args.begin(),
                options_.worker_args.end());
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) return absl::InternalError("fork() failed");
    if (pid_ == 0) {
      // Dies with this process: a search worker killed with SIGKILL left
      // its session worker running (at 78 % of a core) for good. (Bound to
      // the forking thread: one a search thread restarted ends with that
      // thread, when the search's workers are stopped anyway.)
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);  // the parent died before prctl
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      fprintf(stderr, "cannot run worker '%s': %s\n", argv[0], strerror(errno));
      _exit(127);
    }
    close(out[1]);
    // Wait for the "listening" line.
    std::string line;
    pollfd p{out[0], POLLIN, 0};
    auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
    while (line.find('\n') == std::string::npos) {
      int left = std::chrono::duration_cast<std::chrono::milliseconds>(
                     deadline - std::chrono::steady_clock::now())
                     .count();
      if (left <= 0 || poll(&p, 1, left) <= 0) break;
      char buf[256];
      ssize_t n = read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, n);
    }
    close(out[0]);
    if (line.rfind("listening ", 0) != 0) {
      Kill();
      return absl::UnavailableError(absl::StrCat(
          "worker '", options_.worker_binary, "' did not start (",
          line.empty() ? "no output" : line, "); check the binary path"));
    }
    target = "unix:" + socket_path_;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  auto channel = grpc::CreateCustomChannel(
      target, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                 options_.start_timeout)) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to the worker at ", target));
  }
  stub_ = v1::CompilationSessionService::NewStub(channel);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RemoteSession>> RemoteSession::Start(
    WorkerProcess& worker, v1::ModuleSource source,
    const std::vector<v1::ObservationKind>& observe,
    v1::StartSessionReply* reply) {
  std::unique_ptr<RemoteSession> session(
      new RemoteSession(worker, std::move(source)));
  v1::StartSessionRequest request;
  *request.mutable_source() = session->source_;
  for (auto kind : observe) request.add_observe(kind);
  v1::StartSessionReply local;
  if (reply == nullptr) reply = &local;
  auto context = ContextWithDeadline(worker.options().call_timeout);
  grpc::Status status =
      worker.stub().StartSession(context.get(), request, reply);
  if (!status.ok()) {
    if (WorkerLost(status) && worker.can_restart()) (void)worker.Restart();
    return FromGrpc(status);
  }
  session->session_id_ = reply->session_id();
  session->generation_ = worker.generation();
  return session;
}

RemoteSession::~RemoteSession() {
  if (generation_ != worker_.generation()) return;
  v1::EndSessionRequest request;
  request.set_session_id(session_id_);
  v1::EndSessionReply reply;
  auto context = ContextWithDeadline(std::chrono::milliseconds(2000));
  (void)worker_.stub().EndSession(context.get(), request, &reply);
}

absl::Status RemoteSession::Recreate() {
  v1::StartSessionRequest request;
  *request.mutable_source() = source_;
  v1::StartSessionReply reply;
  auto context = ContextWithDeadline(worker_.options().call_timeout);
  grpc::Status status =
      worker_.stub().StartSession(context.get(), request, &reply);
  if (!status.ok()) return FromGrpc(status);
  session_id_ = reply.session_id();
  generation_ = worker_.generation();
  if (history_.empty()) return absl::OkStatus();
  v1::StepRequest step;
  step.set_session_id(session_id_);
  for (int a : history_) step.add_actions(a);
  v1::StepReply step_reply;
  auto step_context = ContextWithDeadline(worker_.options().call_timeout);
  return FromGrpc(worker_.stub().Step(step_context.get(), step, &step_reply));
}

absl::Status RemoteSession::EnsureLive() {
  if (generation_ == worker_.generation()) return absl::OkStatus();
  return Recreate();
}

absl::StatusOr<v1::StepReply> RemoteSession::CallStep(
    const std::vector<int>& actions,
    const std::vector<v1::ObservationKind>& observe) {
  if (absl::Status s = EnsureLive(); !s.ok()) return s;
  v1::StepRequest request;
  request.set_session_id(session_id_);
  for (int a : actions) request.add_actions(a);
  for (auto kind : observe) request.add_observe(kind);
  v1::StepReply reply;
  auto context = ContextWithDeadline(worker_.options().call_timeout);
  grpc::Status status = worker_.stub().Step(context.get(), request, &reply);
  if (status.ok()) return reply;
  if (!WorkerLost(status)) return FromGrpc(status);
  const bool timed_out =
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  if (absl::Status s = worker_.Restart(); !s.ok()) return s;
  return timed_out ? absl::DeadlineExceededError("timeout")
                   : absl::AbortedError("crash");
}

absl::StatusOr<v1::StepReply> RemoteSession::Step(
    const std::vector<int>& actions,
    const std::vector<v1::ObservationKind>& observe) {
  last_failed_action_ = -1;
  absl::StatusOr<v1::StepReply> reply = CallStep(actions, observe);
  if (reply.ok()) {
    history_.insert(history_.end(), actions.begin(), actions.end());
    return reply;
  }
  const absl::StatusCode code = reply.status().code();
  if (code != absl::StatusCode::kAborted &&
      code != absl::StatusCode::kDeadlineExceeded) {
    // Rejected by a live worker: the actions before the rejected one stay
    // applied there; restore exactly the history instead.
    (void)Recreate();
    return reply.status();
  }
  // The worker died or hung somewhere in the batch: find the action by
  // applying them one at a time on the restarted worker.
  for (size_t i = 0; i < actions.size(); ++i) {
    const bool last = i + 1 == actions.size();
    absl::StatusOr<v1::StepReply> one = CallStep(
        {actions[i]}, last ? observe : std::vector<v1::ObservationKind>{});
    if (one.ok()) {
      history_.push_back(actions[i]);
      if (last) return one;  // the failure did not reproduce
      continue;
    }
    last_failed_action_ = actions[i];
    const absl::StatusCode c = one.status().code();
    if (c == absl::StatusCode::kAborted ||
        c == absl::StatusCode::kDeadlineExceeded) {
      const std::string what = c == absl::StatusCode::kAborted
                                   ? "crashed the session worker"
                                   : "did not finish within the call timeout";
      const std::string message = absl::StrCat(
          "action ", actions[i], " ", what,
          "; the worker was restarted and the state restored to before it");
      return c == absl::StatusCode::kAborted
                 ? absl::AbortedError(message)
                 : absl::DeadlineExceededError(message);
    }
    (void)Recreate();
    return one.status();
  }
  return reply.status();
}

absl::StatusOr<v1::ObserveReply> RemoteSession::Observe(
    const std::vector<v1::ObservationKind>& observe) {
  if (absl::Status s = EnsureLive(); !s.ok()) return s;
  v1::ObserveRequest request;
  request.set_session_id(session_id_);
  for (auto kind : observe) request.add_observe(kind);
  v1::ObserveReply reply;
  auto context = ContextWithDeadline(worker_.options().call_timeout);
  grpc::Status status = worker_.stub().Observe(context.get(), request, &reply);
  if (!status.ok()) {
    if (WorkerLost(status) && worker_.can_restart()) (void)worker_.Restart();
    return FromGrpc(status);
  }
  return reply;
}

absl::StatusOr<std::unique_ptr<RemoteSession>> RemoteSession::Fork() {
  if (absl::Status s = EnsureLive(); !s.ok()) return s;
  v1::ForkRequest request;
  request.set_session_id(session_id_);
  v1::ForkReply reply;
  auto context = ContextWithDeadline(worker_.options().call_timeout);
  grpc::Status status = worker_.stub().Fork(context.get(), request, &reply);
  if (!status.ok()) return FromGrpc(status);
  std::unique_ptr<RemoteSession> copy(new RemoteSession(worker_, source_));
  copy->session_id_ = reply.session_id();
  copy->generation_ = generation_;
  copy->history_ = history_;
  return copy;
}

}  // namespace phaseloop::service
