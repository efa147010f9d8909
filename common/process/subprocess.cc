#include "common/process/subprocess.h"

#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/process/stop_signals.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

namespace phaseloop::process {
namespace {

absl::StatusOr<std::string> ReadLog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

absl::StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("empty command");
  llvm::ErrorOr<std::string> env = llvm::sys::findProgramByName("env");
  if (!env)
    return absl::FailedPreconditionError("'env' (coreutils) not on PATH");
  // env -C DIR NAME=VALUE... timeout ... argv: cwd, environment and time
  // limit without forking by hand.
  std::vector<std::string> args = {*env};
  if (!spec.cwd.empty()) args.insert(args.end(), {"-C", spec.cwd});
  args.insert(args.end(), spec.env.begin(), spec.env.end());
  if (spec.timeout_seconds > 0) {
    args.insert(args.end(), {"timeout", "-k", "1",
                             absl::StrCat(spec.timeout_seconds, "s")});
  }
  args.insert(args.end(), spec.argv.begin(), spec.argv.end());

  llvm::SmallString<128> log_path;
  if (llvm::sys::fs::createTemporaryFile("phaseloop-run", "log", log_path)) {
    return absl::InternalError("cannot create a temporary file in $TMPDIR");
  }
  const std::string log(log_path);
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(log), llvm::StringRef(log)};
  std::string exec_error;
  bool failed_to_start = false;
  // Registered while it runs: under a time limit it is timeout(1), which
  // makes a process group of its own that a stop signal must kill.
  int rc = -1;
  const auto started_at = std::chrono::steady_clock::now();
  llvm::sys::ProcessInfo started = llvm::sys::ExecuteNoWait(
      *env, argv, std::nullopt, redirects, /*MemoryLimit=*/0, &exec_error,
      &failed_to_start);
  if (!failed_to_start) {
    AddStoppableChild(started.Pid);
    // Waited for without reaping, then unregistered, then reaped: a stop
    // signal in between never meets a pid the kernel gave another process.
    // (waitpid, not llvm::sys::Wait: that reports exit 127 as -1.)
    siginfo_t ended;
    while (waitid(P_PID, started.Pid, &ended, WEXITED | WNOWAIT) != 0 &&
           errno == EINTR) {
    }
    RemoveStoppableChild(started.Pid);
    int status = 0;
    pid_t waited;
    do {
      waited = waitpid(started.Pid, &status, 0);
    } while (waited < 0 && errno == EINTR);
    if (waited == started.Pid) {
      rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
  absl::StatusOr<std::string> output = ReadLog(log);
  llvm::sys::fs::remove(log);
  if (failed_to_start) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run '", spec.argv[0], "': ", exec_error));
  }
  ProcessResult result;
  result.exit_code = rc;
  // timeout(1) exits 124 when the limit hit, 137 when KILL was needed —
  // and 137 too when the command itself was killed by SIGKILL (the OOM
  // killer, say), which is a timeout only once the limit had passed.
  const double ran_s = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - started_at)
                           .count();
  result.timed_out =
      spec.timeout_seconds > 0 &&
      (rc == 124 || (rc == 137 && ran_s >= spec.timeout_seconds));
  if (output.ok()) {
    constexpr size_t kKeep = 64 * 1024;
    result.output = output->size() > kKeep
                        ? output->substr(output->size() - kKeep)
                        : std::move(*output);
  }
  // env's or timeout's own "cannot run", the only output then (a build
  // script's missing inner command exits 127 too, in the script's words).
  const std::string first_line =
      result.output.substr(0, result.output.find('\n'));
  if (rc == 127 &&
      (first_line.find("env: ") != std::string::npos ||
       first_line.find("timeout: ") != std::string::npos) &&
      first_line.find("No such file") != std::string::npos) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot run '", spec.argv[0], "': not found; ", result.output));
  }
  return result;
}

std::string ShortReason(const std::string& text, int max_lines) {
  std::vector<std::string> lines, errors;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    lines.push_back(line);
    if (line.find("error:") != std::string::npos ||
        line.find("fatal") != std::string::npos ||
        line.find("cannot") != std::string::npos) {
      errors.push_back(line);
    }
  }
  const std::vector<std::string>& pick = errors.empty() ? lines : errors;
  std::string out;
  size_t first = errors.empty() && pick.size() > size_t(max_lines)
                     ? pick.size() - max_lines
                     : 0;
  for (size_t i = first; i < pick.size() && i < first + max_lines; ++i) {
    absl::StrAppend(&out, out.empty() ? "" : " | ", pick[i]);
  }
  return out;
}

}  // namespace phaseloop::process
