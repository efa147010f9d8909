#include "common/process/stop_signals.h"

#include <signal.h>

#include <atomic>
#include <cstring>
#include <initializer_list>

namespace phaseloop::process {
namespace {

// The children running now (0: a free slot). Lock-free: the handler may run
// at any time.
constexpr int kSlots = 64;
std::atomic<pid_t> children[kSlots];

extern "C" void KillChildrenAndStop(int signal_number) {
  for (std::atomic<pid_t>& slot : children) {
    const pid_t child = slot.load();
    if (child <= 0) continue;
    // Its whole group when it leads one; a child that has not made its
    // group yet (or never does) alone.
    if (kill(-child, SIGKILL) != 0) kill(child, SIGKILL);
  }
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  sigaction(signal_number, &default_action, nullptr);
  raise(signal_number);
}

}  // namespace

void KillChildrenOnStopSignals() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = KillChildrenAndStop;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM}) {
    sigaction(signal_number, &action, nullptr);
  }
}

void AddStoppableChild(pid_t pid) {
  for (std::atomic<pid_t>& slot : children) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, pid)) return;
  }
}

void RemoveStoppableChild(pid_t pid) {
  for (std::atomic<pid_t>& slot : children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

}  // namespace phaseloop::process
