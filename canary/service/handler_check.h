#ifndef PHASELOOP_CANARY_SERVICE_HANDLER_CHECK_H_
#define PHASELOOP_CANARY_SERVICE_HANDLER_CHECK_H_

// Correctness before any canary: two or more handler libraries (baseline,
// candidate, optionally an -O0 reference) run the same deterministic
// requests (check_requests.h) and must give the same result code and the
// same bytes for every one. The first handler is the reference; each other
// is compared with it.
//
// Each handler runs in a forked child (common/process/child_process) with a
// time limit, never in the caller: a miscompiled candidate may crash or
// loop, which becomes a finding ("crashed: signal 11") instead of taking the
// controller down; every handler gets a fresh address space, so nothing one
// library does (a corrupted heap, a static it sets) touches the next, and
// nothing stays loaded in the caller afterwards. The children send their
// outputs back over a pipe. Like RunInChild, call it before the caller
// starts threads that may hold the dynamic loader's or allocator's locks
// (the time limit turns such a deadlock into a finding, not a hang).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "canary/service/check_requests.h"

namespace phaseloop::canary {

struct HandlerUnderCheck {
  std::string name;     // "baseline", "candidate", "O0"
  std::string so_path;  // its libdemo_handler.so
};

struct CheckOptions {
  std::vector<CheckRequest> requests = DefaultCheckRequests();
  int timeout_ms = 120000;  // per handler, all requests
};

// One disagreement with the reference, or a handler that did not finish.
struct CheckFinding {
  std::string handler;  // the handler compared with the reference
  std::string request;  // CheckRequest::Describe(); "" when it did not run
  std::string kind;
  size_t size = 0;
  // Offset of the first differing byte; -1 when the codes or the handler's
  // run differ (see message).
  int64_t first_differing_byte = -1;
  std::string message;  // the whole finding, for people
};

struct CheckReport {
  int handlers = 0;
  int requests = 0;
  double seconds = 0;
  std::vector<CheckFinding> findings;  // empty: every output equal
  bool ok() const { return findings.empty(); }
  // "3 handlers agree on 48 requests (1.2 s)" or the findings, one a line.
  std::string Summary() const;
};

// InvalidArgument for fewer than two handlers or no requests;
// FailedPrecondition naming a handler whose library cannot be loaded (not a
// handler, another ABI version). Everything else is a finding.
absl::StatusOr<CheckReport> CheckHandlersAgree(
    const std::vector<HandlerUnderCheck>& handlers,
    const CheckOptions& options = CheckOptions());

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_SERVICE_HANDLER_CHECK_H_
