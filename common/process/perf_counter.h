#ifndef PHASELOOP_COMMON_PROCESS_PERF_COUNTER_H_
#define PHASELOOP_COMMON_PROCESS_PERF_COUNTER_H_

// One Linux perf_event counter on a process that is about to exec: opened
// disabled, enabled by the kernel at the process's next exec, counting user
// space only, inherited by the children it forks afterwards (their counts
// are added when they exit). RunMeasured opens its instructions and cycles
// counters with this between fork and exec. Thread-compatible: one owner
// per counter.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace phaseloop::process {

class PerfCounter {
 public:
  // Opens a counter of perf `type` and `config` (PERF_TYPE_HARDWARE /
  // PERF_COUNT_HW_INSTRUCTIONS, ...) on `pid` (0 = this process). `what`
  // names it in messages ("instructions"). Fails with the errno's reason
  // (PerfOpenFailureNote) when the kernel refuses.
  static absl::StatusOr<PerfCounter> OpenForExec(pid_t pid, uint32_t type,
                                                 uint64_t config,
                                                 const std::string& what);

  PerfCounter(PerfCounter&& other) noexcept;
  PerfCounter& operator=(PerfCounter&& other) noexcept;
  PerfCounter(const PerfCounter&) = delete;
  PerfCounter& operator=(const PerfCounter&) = delete;
  ~PerfCounter();

  // The count so far (final once the process and its children have exited).
  // When the kernel multiplexed the counter with others it ran only part of
  // the time: the count is scaled to the whole time, and `scaled` says so.
  // An error when it never ran (FailedPrecondition) or cannot be read.
  struct Reading {
    int64_t value = 0;
    bool scaled = false;
  };
  absl::StatusOr<Reading> Read() const;

 private:
  PerfCounter(int fd, std::string what) : fd_(fd), what_(std::move(what)) {}
  int fd_ = -1;
  std::string what_;
};

// Why perf_event_open failed with `error` (an errno) for counter `what`, in
// words an operator can act on: "perf_event_paranoid=3 forbids ..." for
// EACCES/EPERM, "no hardware PMU (a VM without a virtual PMU?) ..." for
// ENOENT/EOPNOTSUPP, and so on.
std::string PerfOpenFailureNote(const std::string& what, int error);

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_PERF_COUNTER_H_
