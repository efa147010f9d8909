#include "common/process/perf_counter.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace phaseloop::process {
namespace {

std::string Paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string value;
  if (!(in >> value)) return "unknown";
  return value;
}

}  // namespace

std::string PerfOpenFailureNote(const std::string& what, int error) {
  const std::string head =
      absl::StrCat("perf_event_open(", what, "): ", std::strerror(error), ": ");
  switch (error) {
    case EACCES:
    case EPERM:
      return absl::StrCat(head, "perf_event_paranoid=", Paranoid(),
                          " forbids counting user-space events of a child "
                          "(set kernel.perf_event_paranoid <= 2, or grant "
                          "CAP_PERFMON)");
    case ENOENT:
    case EOPNOTSUPP:
      return absl::StrCat(head,
                          "no hardware PMU exposes this event here (a VM "
                          "without a virtual PMU has no "
                          "/sys/bus/event_source/devices/cpu); run on bare "
                          "metal or enable the VM's PMU");
    case ENOSYS:
      return absl::StrCat(head, "the kernel has no perf events support");
    case EMFILE:
    case ENFILE:
      return absl::StrCat(head, "out of file descriptors");
    case ESRCH:
      return absl::StrCat(head, "the process exited before it was counted");
    default:
      return absl::StrCat(head, "the kernel refused the counter");
  }
}

absl::StatusOr<PerfCounter> PerfCounter::OpenForExec(pid_t pid, uint32_t type,
                                                     uint64_t config,
                                                     const std::string& what) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format =
      PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const long fd = syscall(SYS_perf_event_open, &attr, pid, /*cpu=*/-1,
                          /*group_fd=*/-1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(PerfOpenFailureNote(what, errno));
  }
  return PerfCounter(static_cast<int>(fd), what);
}

PerfCounter::PerfCounter(PerfCounter&& other) noexcept
    : fd_(other.fd_), what_(std::move(other.what_)) {
  other.fd_ = -1;
}

PerfCounter& PerfCounter::operator=(PerfCounter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    what_ = std::move(other.what_);
    other.fd_ = -1;
  }
  return *this;
}

PerfCounter::~PerfCounter() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<PerfCounter::Reading> PerfCounter::Read() const {
  uint64_t values[3] = {};  // value, time enabled, time running
  ssize_t n;
  do {
    n = read(fd_, values, sizeof values);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof values)) {
    return absl::InternalError(absl::StrCat(
        "reading the ", what_,
        " counter: ", n < 0 ? std::strerror(errno) : "short read"));
  }
  if (values[2] == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", what_,
        " counter never ran (the process did not exec, or other counters "
        "held every hardware slot)"));
  }
  Reading reading;
  if (values[2] < values[1]) {
    reading.scaled = true;
    reading.value = static_cast<int64_t>(static_cast<long double>(values[0]) *
                                         values[1] / values[2]);
  } else {
    reading.value = static_cast<int64_t>(values[0]);
  }
  return reading;
}

}  // namespace phaseloop::process
