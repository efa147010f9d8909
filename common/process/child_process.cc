#include "common/process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace phaseloop::process {
namespace {

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::atomic<pid_t> running_child{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

}  // namespace

pid_t RunningChild() { return running_child.load(); }

ChildOutcome RunInChild(
    const std::function<absl::StatusOr<std::string>()>& work, int timeout_ms) {
  ChildOutcome outcome;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    outcome.message = absl::StrCat("pipe: ", std::strerror(errno));
    return outcome;
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    outcome.message = absl::StrCat("fork: ", std::strerror(errno));
    return outcome;
  }
  if (pid == 0) {
    // Dies with the parent, however the parent dies (SIGKILL included):
    // nothing else would stop an orphan's work or its files.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);  // the parent died before that
    close(fds[0]);
    absl::StatusOr<std::string> result = work();
    // First byte: 'O' ok, 'E' error; then the report or message.
    WriteAll(fds[1], result.ok()
                         ? "O" + *result
                         : "E" + std::string(result.status().message()));
    close(fds[1]);
    _exit(0);  // no atexit handlers or static destructors of the parent
  }
  running_child.store(pid);
  close(fds[1]);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string received;
  bool timed_out = false;
  bool reaped = false;
  int status = 0;
  char buffer[65536];
  // The child's end of the pipe may also be held by another process forked
  // meanwhile (a sibling from another thread inherits it: O_CLOEXEC closes
  // on exec, not on fork), so end-of-file alone would wait for that one
  // too. When the pipe is quiet, ask whether the child itself has exited.
  constexpr int kQuietCheckMs = 20;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready =
        poll(&p, 1, static_cast<int>(std::min<int64_t>(left, kQuietCheckMs)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready > 0) {
      ssize_t n = read(fds[0], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EOF: the child finished or died
      received.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (waitpid(pid, &status, WNOHANG) == pid) {
      // Exited: what it wrote is in the pipe; take it without waiting for
      // an end-of-file that another holder of the pipe may delay.
      reaped = true;
      fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
      for (;;) {
        ssize_t n = read(fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        received.append(buffer, static_cast<size_t>(n));
      }
      break;
    }
  }
  close(fds[0]);
  if (!reaped) {
    if (timed_out) kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  running_child.store(0);
  if (timed_out) {
    outcome.kind = ChildOutcome::kTimedOut;
    outcome.message = absl::StrCat("optimizer_timed_out: no result within ",
                                   timeout_ms, " ms");
  } else if (WIFSIGNALED(status)) {
    outcome.kind = ChildOutcome::kCrashed;
    outcome.message =
        absl::StrCat("optimizer_crashed: signal ", WTERMSIG(status), " (",
                     strsignal(WTERMSIG(status)), ")");
  } else if (received.empty() || WEXITSTATUS(status) != 0) {
    outcome.kind = ChildOutcome::kCrashed;
    outcome.message = absl::StrCat("optimizer_crashed: exit status ",
                                   WEXITSTATUS(status), " without a result");
  } else if (received[0] == 'O') {
    outcome.kind = ChildOutcome::kOk;
    outcome.report = received.substr(1);
  } else {
    outcome.kind = ChildOutcome::kFailed;
    outcome.message = received.substr(1);
  }
  return outcome;
}

}  // namespace phaseloop::process
