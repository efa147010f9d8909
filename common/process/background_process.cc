#include "common/process/background_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace phaseloop::process {
namespace {

// Reaps `pid` if it is our exited child; true when it was reaped.
bool ReapIfChild(pid_t pid) {
  int status = 0;
  return waitpid(pid, &status, WNOHANG) == pid;
}

}  // namespace

absl::StatusOr<int64_t> ProcessStartTicks(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::NotFoundError(absl::StrCat("no process ", pid));
  }
  // The command name (field 2) is in parentheses and may hold spaces: the
  // fields after the last ')' start with field 3; starttime is field 22.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) {
    return absl::DataLossError(absl::StrCat("/proc/", pid, "/stat: no ')'"));
  }
  std::vector<std::string> fields =
      absl::StrSplit(line.substr(close + 2), ' ', absl::SkipEmpty());
  int64_t ticks = 0;
  if (fields.size() < 20 || !absl::SimpleAtoi(fields[19], &ticks)) {
    return absl::DataLossError(
        absl::StrCat("/proc/", pid, "/stat: no start time"));
  }
  if (!fields.empty() && fields[0] == "Z") {
    return absl::NotFoundError(absl::StrCat("process ", pid, " has exited"));
  }
  return ticks;
}

absl::StatusOr<BackgroundProcess> StartBackground(const BackgroundSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("empty command");
  if (spec.log_path.empty()) {
    return absl::InvalidArgumentError("a background process needs a log file");
  }
  const int log = open(spec.log_path.c_str(),
                       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot open the log ", spec.log_path, ": ", strerror(errno)));
  }
  // stdout alone to its own file (truncated) when asked: a command's JSON.
  const int out = spec.stdout_path.empty()
                      ? -1
                      : open(spec.stdout_path.c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (!spec.stdout_path.empty() && out < 0) {
    close(log);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", spec.stdout_path, ": ", strerror(errno)));
  }
  // A pipe closed on exec tells the parent whether exec worked.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    close(log);
    if (out >= 0) close(out);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.push_back(*e);
  env_strings.insert(env_strings.end(), spec.env.begin(), spec.env.end());
  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env_strings)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    if (out >= 0) close(out);
    close(exec_pipe[0]);
    close(exec_pipe[1]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the parent died already
    const int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0) dup2(null_in, 0);
    dup2(out >= 0 ? out : log, 1);
    dup2(log, 2);
    execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!write(exec_pipe[1], &error, sizeof error);
    _exit(127);
  }
  close(log);
  if (out >= 0) close(out);
  close(exec_pipe[1]);
  int exec_error = 0;
  const ssize_t got = read(exec_pipe[0], &exec_error, sizeof exec_error);
  close(exec_pipe[0]);
  if (got == sizeof exec_error) {
    waitpid(pid, nullptr, 0);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", spec.argv[0], ": ", strerror(exec_error)));
  }
  BackgroundProcess process;
  process.pid = pid;
  auto ticks = ProcessStartTicks(pid);
  process.start_ticks = ticks.ok() ? *ticks : 0;
  return process;
}

bool IsRunning(const BackgroundProcess& process) {
  if (process.pid <= 0) return false;
  ReapIfChild(process.pid);
  auto ticks = ProcessStartTicks(process.pid);
  return ticks.ok() && *ticks == process.start_ticks;
}

std::optional<int> ExitStatusIfEnded(const BackgroundProcess& process) {
  if (process.pid <= 0) return -1;
  int status = 0;
  const pid_t reaped = waitpid(process.pid, &status, WNOHANG);
  if (reaped == process.pid) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
  }
  if (reaped == 0) return std::nullopt;  // our child, still running
  if (IsRunning(process)) return std::nullopt;
  return -1;
}

absl::Status StopBackground(const BackgroundProcess& process,
                            int64_t grace_ms) {
  if (!IsRunning(process)) return absl::OkStatus();
  // Its own group (setpgid at start): signal the group so its children go
  // too, but only when the group is the process's own.
  const pid_t target =
      getpgid(process.pid) == process.pid ? -process.pid : process.pid;
  kill(target, SIGTERM);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!IsRunning(process)) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!IsRunning(process)) return absl::OkStatus();
  kill(target, SIGKILL);
  for (int i = 0; i < 250 && IsRunning(process); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (IsRunning(process)) {
    return absl::InternalError(
        absl::StrCat("process ", process.pid, " survived SIGKILL"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> WaitForAddressFile(const BackgroundProcess& process,
                                               const std::string& path,
                                               int64_t timeout_ms,
                                               const std::atomic<bool>* stop) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop != nullptr && stop->load()) {
      return absl::CancelledError("stopped while waiting for " + path);
    }
    std::string address;
    if (std::ifstream in(path); in && std::getline(in, address, '\0')) {
      while (!address.empty() &&
             isspace(static_cast<unsigned char>(address.back()))) {
        address.pop_back();
      }
      if (!address.empty()) return address;
    }
    if (!IsRunning(process)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "process ", process.pid, " exited before writing ", path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("process ", process.pid, " wrote no address to ", path,
                   " within ", timeout_ms / 1000, " s"));
}

absl::StatusOr<std::string> StartServer(const BackgroundSpec& spec,
                                        const std::string& address_file,
                                        BackgroundProcess* started,
                                        int64_t timeout_ms) {
  std::remove(address_file.c_str());
  auto process = StartBackground(spec);
  if (!process.ok()) return process.status();
  auto address = WaitForAddressFile(*process, address_file, timeout_ms);
  if (!address.ok()) {
    (void)StopBackground(*process);
    return absl::InternalError(
        absl::StrCat(spec.argv.empty() ? "the server" : spec.argv[0],
                     " wrote no address to ", address_file, " (",
                     address.status().message(), "); see ", spec.log_path));
  }
  *started = *process;
  return address;
}

}  // namespace phaseloop::process
