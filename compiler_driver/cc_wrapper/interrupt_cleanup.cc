#include "compiler_driver/cc_wrapper/interrupt_cleanup.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/process/child_process.h"

namespace phaseloop::cc_wrapper {
namespace {

constexpr int kSignals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};

// Changed only with kSignals blocked, so the handler never sees it half
// changed; never freed (the handler may run at exit).
std::vector<std::string>* staged_files = nullptr;
pid_t installer = 0;

void OnInterrupt(int signal_number) {
  if (getpid() == installer) {
    const pid_t child = process::RunningChild();
    if (child > 0) {
      kill(child, SIGKILL);
      while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    if (staged_files != nullptr) {
      for (const std::string& path : *staged_files) unlink(path.c_str());
    }
  }
  // Dies of the signal, as clang would (the exit status says which).
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal_number, &default_action, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signal_number);
  sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  raise(signal_number);
}

class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t block;
    sigemptyset(&block);
    for (int s : kSignals) sigaddset(&block, s);
    sigprocmask(SIG_BLOCK, &block, &before_);
  }
  ~SignalsHeld() { sigprocmask(SIG_SETMASK, &before_, nullptr); }

 private:
  sigset_t before_;
};

}  // namespace

void InstallInterruptCleanup() {
  SignalsHeld held;
  if (staged_files == nullptr) staged_files = new std::vector<std::string>();
  installer = getpid();
  for (int s : kSignals) {
    struct sigaction current = {};
    // A signal the caller's parent set to be ignored (nohup's SIGHUP, a
    // background job's SIGINT) stays ignored, as it does for clang.
    if (sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
      continue;
    }
    struct sigaction action = {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    for (int other : kSignals) sigaddset(&action.sa_mask, other);
    sigaction(s, &action, nullptr);
  }
}

void StageForInterruptCleanup(const std::string& path) {
  SignalsHeld held;
  if (staged_files != nullptr) staged_files->push_back(path);
}

void ForgetForInterruptCleanup(const std::string& path) {
  SignalsHeld held;
  if (staged_files == nullptr) return;
  staged_files->erase(
      std::remove(staged_files->begin(), staged_files->end(), path),
      staged_files->end());
}

}  // namespace phaseloop::cc_wrapper
