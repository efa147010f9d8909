#ifndef PHASELOOP_COMMON_COMMAND_STOP_SIGNALS_H_
#define PHASELOOP_COMMON_COMMAND_STOP_SIGNALS_H_

// How long-running commands stop on SIGINT/SIGTERM, in one place. Two forms:
// - a server that only waits: BlockedStopSignals, made before any thread
//   starts (threads inherit the blocked mask, so only Wait receives them);
// - a loop that polls: StopFlagOnSignals, a flag the signals set.

#include <signal.h>

#include <atomic>

namespace phaseloop::command {

// Blocks SIGINT and SIGTERM in the calling thread for its lifetime (the
// previous mask is restored by the destructor). Create it before starting
// the threads of a client library (librdkafka, gRPC).
class BlockedStopSignals {
 public:
  BlockedStopSignals();
  ~BlockedStopSignals();
  BlockedStopSignals(const BlockedStopSignals&) = delete;
  BlockedStopSignals& operator=(const BlockedStopSignals&) = delete;

  // Waits for SIGINT or SIGTERM; returns its number.
  int Wait();

 private:
  sigset_t signals_;
  sigset_t previous_;
};

// Clears the flag and makes SIGINT and SIGTERM set it (process-wide
// handlers). The flag lives as long as the process.
const std::atomic<bool>* StopFlagOnSignals();

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_STOP_SIGNALS_H_
