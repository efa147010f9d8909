#include "common/process/measured_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/process/perf_counter.h"
#include "common/process/stop_signals.h"

extern char** environ;

namespace phaseloop::process {
namespace {

using Clock = std::chrono::steady_clock;

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    Reset();
    fd_ = other.fd_;
    other.fd_ = -1;
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// What the child was doing when it failed to start; sent to the parent
// over the close-on-exec pipe with the errno.
enum class Stage : int { kChdir = 1, kRedirect, kExec };
struct StartFailure {
  Stage stage;
  int error;
};

std::string Quoted(const std::string& s) { return absl::StrCat("'", s, "'"); }

absl::Status CannotStart(absl::StatusCode code, const MeasuredCommand& command,
                         const std::string& why) {
  return absl::Status(
      code, absl::StrCat("cannot start ", Quoted(command.argv[0]), ": ", why));
}

// The inherited environment with `extra` (NAME=VALUE) applied.
absl::StatusOr<std::vector<std::string>> Environment(
    const MeasuredCommand& command) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  for (const std::string& entry : command.env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return CannotStart(absl::StatusCode::kInvalidArgument, command,
                         absl::StrCat("environment entry ", Quoted(entry),
                                      " is not NAME=VALUE"));
    }
    const std::string prefix = entry.substr(0, eq + 1);
    bool replaced = false;
    for (std::string& existing : env) {
      if (existing.compare(0, prefix.size(), prefix) == 0) {
        existing = entry;
        replaced = true;
      }
    }
    if (!replaced) env.push_back(entry);
  }
  return env;
}

// argv[0] as execve needs it: as given when it holds a '/', else the first
// executable regular file of that name on the environment's PATH.
absl::StatusOr<std::string> ProgramPath(const MeasuredCommand& command,
                                        const std::vector<std::string>& env) {
  const std::string& name = command.argv[0];
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/bin:/usr/bin";  // glibc's default without PATH
  for (const std::string& entry : env) {
    if (entry.compare(0, 5, "PATH=") == 0) path = entry.substr(5);
  }
  std::string not_executable;
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    const std::string candidate =
        absl::StrCat(dir.empty() ? "." : dir, "/", name);
    struct stat info;
    if (stat(candidate.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
      continue;
    }
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (not_executable.empty()) not_executable = candidate;
  }
  if (!not_executable.empty()) {
    return CannotStart(
        absl::StatusCode::kPermissionDenied, command,
        absl::StrCat(not_executable, " is not executable (chmod +x it)"));
  }
  return CannotStart(absl::StatusCode::kNotFound, command,
                     absl::StrCat("not found on PATH (", path,
                                  "): install it, or give its path"));
}

// Opens a redirection target in the parent, close-on-exec, at a descriptor
// above 2 (so the child's dup2 onto 0..2 never overwrites another one).
absl::StatusOr<Fd> OpenRedirect(const MeasuredCommand& command,
                                const std::string& path, int flags,
                                const char* what) {
  const std::string& target = path.empty() ? "/dev/null" : path;
  Fd fd(open(target.c_str(), flags | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    const int error = errno;
    return CannotStart(
        error == ENOENT ? absl::StatusCode::kNotFound
                        : absl::StatusCode::kFailedPrecondition,
        command,
        absl::StrCat("cannot open its ", what, " ", Quoted(target), ": ",
                     std::strerror(error)));
  }
  if (fd.get() <= 2) {
    Fd high(fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
    if (high.get() < 0) {
      return CannotStart(absl::StatusCode::kInternal, command,
                         absl::StrCat("dup: ", std::strerror(errno)));
    }
    return high;
  }
  return fd;
}

std::string DescribeStartFailure(const MeasuredCommand& command,
                                 const std::string& program,
                                 const StartFailure& failure,
                                 absl::StatusCode* code) {
  const char* reason = std::strerror(failure.error);
  *code = failure.error == ENOENT   ? absl::StatusCode::kNotFound
          : failure.error == EACCES ? absl::StatusCode::kPermissionDenied
                                    : absl::StatusCode::kFailedPrecondition;
  switch (failure.stage) {
    case Stage::kChdir:
      return absl::StrCat("its working directory ", Quoted(command.cwd), ": ",
                          reason, " (create it, or fix the command's cwd)");
    case Stage::kRedirect:
      return absl::StrCat("redirecting its standard streams: ", reason);
    case Stage::kExec:
      break;
  }
  std::string hint;
  if (failure.error == ENOENT) hint = " (give an existing program)";
  if (failure.error == EACCES) hint = " (is it executable? chmod +x it)";
  if (failure.error == ENOEXEC) hint = " (a script needs a #! line)";
  return absl::StrCat("exec ", program, ": ", reason, hint);
}

// The child between fork and exec: async-signal-safe calls only.
[[noreturn]] void RunChild(int go_read, int failure_write, const char* cwd,
                           const int redirect[3], const char* program,
                           char* const argv[], char* const envp[]) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    // SIG_IGN too: it would survive exec.
    sigaction(signal, &default_action, nullptr);
  }
  setpgid(0, 0);
  char go = 0;
  ssize_t n;
  do {
    n = read(go_read, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) _exit(127);  // the parent gave up on this start

  StartFailure failure{Stage::kExec, 0};
  if (cwd != nullptr && chdir(cwd) != 0) {
    failure = {Stage::kChdir, errno};
  } else {
    for (int i = 0; i < 3 && failure.error == 0; ++i) {
      if (dup2(redirect[i], i) < 0) failure = {Stage::kRedirect, errno};
    }
    if (failure.error == 0) {
      execve(program, argv, envp);
      failure = {Stage::kExec, errno};
    }
  }
  ssize_t written;
  do {
    written = write(failure_write, &failure, sizeof failure);
  } while (written < 0 && errno == EINTR);
  _exit(127);
}

// Waits until `pid` has exited, without reaping it (so its pid, the group's
// id, stays taken until the group is killed), or until `timeout_s` (0 =
// none) passed. True when it exited.
bool WaitForExit(pid_t pid, double timeout_s) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_s));
  auto left_ms = [&]() -> int {
    if (timeout_s <= 0) return -1;
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<int64_t>(0, left.count()));
  };
  Fd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  for (;;) {
    const int wait_ms = left_ms();
    if (pidfd.get() >= 0) {
      pollfd p{pidfd.get(), POLLIN, 0};
      const int ready = poll(&p, 1, wait_ms);
      if (ready > 0) return true;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return false;
    }
    // No pidfd (a kernel before 5.3): ask every millisecond or two.
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    const int flags = WEXITED | WNOWAIT | (wait_ms < 0 ? 0 : WNOHANG);
    if (waitid(P_PID, pid, &info, flags) == 0 && info.si_pid == pid) {
      return true;
    }
    if (errno == ECHILD) return true;
    if (wait_ms == 0) return false;
    usleep(1500);
  }
}

// Whether a process of group `pgid` is alive (a zombie waiting for its
// new parent to reap it is not).
bool HasLiveMember(pid_t pgid) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool live = false;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    std::ifstream in(absl::StrCat("/proc/", entry->d_name, "/stat"));
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // "pid (comm) state ppid pgrp ...": comm may hold anything but the
    // last ')'.
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %ld %ld", &state, &ppid,
                    &pgrp) == 3 &&
        pgrp == pgid && state != 'Z' && state != 'X') {
      live = true;
      break;
    }
  }
  closedir(proc);
  return live;
}

// After SIGKILL to group `pgid` (its leader reaped): waits, up to two
// seconds, until none of it is alive. A killed process dies when next
// scheduled, and the next measurement must not share the CPUs with this
// one's leftovers.
void AwaitGroupGone(pid_t pgid) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(2);
  while (kill(-pgid, 0) == 0 && HasLiveMember(pgid) &&
         Clock::now() < deadline) {
    usleep(1000);
  }
}

// The CPUs this process may run on, as "0-1,4" would list them.
std::string AllowedCpus(const cpu_set_t& set) {
  std::vector<std::string> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(absl::StrCat(cpu));
  }
  return absl::StrJoin(cpus, ",");
}

void Pin(pid_t pid, int cpu, Measurement* m) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    m->pin_note = absl::StrCat("sched_getaffinity: ", std::strerror(errno),
                               "; ran unpinned");
    return;
  }
  if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
    m->pin_note =
        absl::StrCat("cpu ", cpu, " is not one this process may use (",
                     AllowedCpus(allowed), "); ran unpinned");
    return;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(pid, sizeof one, &one) != 0) {
    m->pin_note = absl::StrCat("sched_setaffinity(cpu ", cpu,
                               "): ", std::strerror(errno), "; ran unpinned");
    return;
  }
  m->pinned = true;
}

struct HardwareCounters {
  std::optional<PerfCounter> instructions, cycles;
};

HardwareCounters OpenHardwareCounters(pid_t pid, std::string* note) {
  HardwareCounters counters;
  absl::StatusOr<PerfCounter> instructions = PerfCounter::OpenForExec(
      pid, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions");
  if (!instructions.ok()) {
    *note = std::string(instructions.status().message());
    return counters;
  }
  absl::StatusOr<PerfCounter> cycles = PerfCounter::OpenForExec(
      pid, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles");
  if (!cycles.ok()) {
    *note = std::string(cycles.status().message());
    return counters;
  }
  counters.instructions = std::move(*instructions);
  counters.cycles = std::move(*cycles);
  return counters;
}

void ReadHardwareCounters(const HardwareCounters& counters, Measurement* m) {
  if (!counters.instructions || !counters.cycles) return;
  absl::StatusOr<PerfCounter::Reading> instructions =
      counters.instructions->Read();
  absl::StatusOr<PerfCounter::Reading> cycles = counters.cycles->Read();
  for (const auto* reading : {&instructions, &cycles}) {
    if (!reading->ok()) {
      m->hardware_note = std::string(reading->status().message());
      return;
    }
  }
  m->hardware_counted = true;
  m->instructions = instructions->value;
  m->cycles = cycles->value;
  if (instructions->scaled || cycles->scaled) {
    m->hardware_note =
        "the kernel multiplexed the counters: counts scaled from the time "
        "they ran";
  }
}

double Seconds(const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; }

}  // namespace

absl::StatusOr<Measurement> RunMeasured(const MeasuredCommand& command) {
  if (command.argv.empty() || command.argv[0].empty()) {
    return absl::InvalidArgumentError(
        "cannot start a measured command with an empty argv: give the "
        "program and its arguments");
  }
  absl::StatusOr<std::vector<std::string>> env = Environment(command);
  if (!env.ok()) return env.status();
  absl::StatusOr<std::string> program = ProgramPath(command, *env);
  if (!program.ok()) return program.status();
  absl::StatusOr<Fd> in =
      OpenRedirect(command, command.stdin_path, O_RDONLY, "stdin");
  if (!in.ok()) return in.status();
  constexpr int kWrite = O_WRONLY | O_CREAT | O_TRUNC;
  absl::StatusOr<Fd> out =
      OpenRedirect(command, command.stdout_path, kWrite, "stdout");
  if (!out.ok()) return out.status();
  absl::StatusOr<Fd> err =
      !command.stderr_path.empty() && command.stderr_path == command.stdout_path
          ? absl::StatusOr<Fd>(Fd(fcntl(out->get(), F_DUPFD_CLOEXEC, 3)))
          : OpenRedirect(command, command.stderr_path, kWrite, "stderr");
  if (!err.ok()) return err.status();
  if (err->get() < 0) {
    return CannotStart(absl::StatusCode::kInternal, command,
                       absl::StrCat("dup: ", std::strerror(errno)));
  }

  // Everything the child needs, built before the fork.
  std::vector<char*> argv, envp;
  for (const std::string& arg : command.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  for (const std::string& entry : *env) {
    envp.push_back(const_cast<char*>(entry.c_str()));
  }
  envp.push_back(nullptr);
  const int redirect[3] = {in->get(), out->get(), err->get()};

  int go[2], failure[2];
  if (pipe2(go, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  Fd go_read(go[0]), go_write(go[1]);
  if (pipe2(failure, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  Fd failure_read(failure[0]), failure_write(failure[1]);

  const pid_t pid = fork();
  if (pid < 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start ", Quoted(command.argv[0]),
                     ": fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    RunChild(go_read.get(), failure_write.get(),
             command.cwd.empty() ? nullptr : command.cwd.c_str(), redirect,
             program->c_str(), argv.data(), envp.data());
  }
  go_read.Reset();
  failure_write.Reset();
  // Both sides set the group, so it exists whichever runs first.
  setpgid(pid, pid);
  AddStoppableChild(pid);

  Measurement m;
  HardwareCounters counters;
  if (command.count_hardware) {
    counters = OpenHardwareCounters(pid, &m.hardware_note);
  }
  if (command.cpu >= 0) Pin(pid, command.cpu, &m);

  const Clock::time_point start = Clock::now();
  ssize_t n;
  do {
    n = write(go_write.get(), "g", 1);
  } while (n < 0 && errno == EINTR);
  const bool released = n == 1;
  const int release_error = errno;
  const bool exited =
      released &&
      WaitForExit(pid, command.timeout_s > 0 ? command.timeout_s : 0);
  m.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  m.timed_out = released && !exited;
  kill(-pid, SIGKILL);  // what is left of its group (all of it on timeout)
  RemoveStoppableChild(pid);
  if (!released) kill(pid, SIGKILL);  // still waiting for its go byte
  int status = 0;
  rusage usage;
  std::memset(&usage, 0, sizeof usage);
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  AwaitGroupGone(pid);
  if (!released) {
    return absl::InternalError(
        absl::StrCat("cannot start ", Quoted(command.argv[0]),
                     ": releasing the child: ", std::strerror(release_error)));
  }

  // A child that failed before exec has written why (it exited at once);
  // one that exec'd closed the pipe unwritten.
  StartFailure start_failure;
  if (read(failure_read.get(), &start_failure, sizeof start_failure) ==
      static_cast<ssize_t>(sizeof start_failure)) {
    absl::StatusCode code;
    const std::string why =
        DescribeStartFailure(command, *program, start_failure, &code);
    return CannotStart(code, command, why);
  }

  if (WIFEXITED(status)) {
    m.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    m.term_signal = WTERMSIG(status);
    m.exit_status = 128 + m.term_signal;
  }
  m.user_s = Seconds(usage.ru_utime);
  m.sys_s = Seconds(usage.ru_stime);
  m.max_rss_kb = usage.ru_maxrss;
  if (command.count_hardware) ReadHardwareCounters(counters, &m);
  return m;
}

HardwareCounterSupport ProbeHardwareCounters() {
  static const HardwareCounterSupport* support = [] {
    auto* s = new HardwareCounterSupport;
    std::string note;
    HardwareCounters counters = OpenHardwareCounters(0, &note);
    s->available = counters.instructions.has_value();
    s->note = note;
    return s;
  }();
  return *support;
}

}  // namespace phaseloop::process
