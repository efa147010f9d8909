#ifndef PHASELOOP_COMMON_PROCESS_CHILD_PROCESS_H_
#define PHASELOOP_COMMON_PROCESS_CHILD_PROCESS_H_

// Runs risky work (LLVM passes and codegen on a user's module) in a forked
// child with a time limit, so that a crash or a hang becomes a value the
// wrapper can fall back on. The child reports a string (or an error message)
// to the parent over a pipe; bulky outputs go to files the work writes.
// Call from a single-threaded process.

#include <sys/types.h>

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace phaseloop::process {

struct ChildOutcome {
  enum Kind { kOk, kFailed, kCrashed, kTimedOut };
  Kind kind = kFailed;
  std::string report;   // kOk: what the work returned
  std::string message;  // otherwise: the error, the signal, or the timeout
};

// The snake_case names the decision log uses for kFailed/kCrashed/kTimedOut
// ("optimizer_crashed", "optimizer_timed_out"; kFailed uses the first word
// of the work's error).
ChildOutcome RunInChild(
    const std::function<absl::StatusOr<std::string>()>& work, int timeout_ms);

// The child RunInChild is waiting for now, 0 when none: what a signal
// handler kills before it removes the child's files and dies. (The child
// also dies with its parent: PR_SET_PDEATHSIG.) Async-signal-safe.
pid_t RunningChild();

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_CHILD_PROCESS_H_
