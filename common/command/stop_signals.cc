#include "common/command/stop_signals.h"

#include <pthread.h>

#include <csignal>

namespace phaseloop::command {
namespace {

std::atomic<bool> stop_requested{false};
extern "C" void RequestStop(int) { stop_requested.store(true); }

}  // namespace

BlockedStopSignals::BlockedStopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
}

BlockedStopSignals::~BlockedStopSignals() {
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

int BlockedStopSignals::Wait() {
  int signal_number = 0;
  while (sigwait(&signals_, &signal_number) != 0) {
  }
  return signal_number;
}

const std::atomic<bool>* StopFlagOnSignals() {
  stop_requested.store(false);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
  return &stop_requested;
}

}  // namespace phaseloop::command
