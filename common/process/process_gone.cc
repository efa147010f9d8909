#include "common/process/process_gone.h"

#include <errno.h>
#include <signal.h>

namespace phaseloop::process {

bool ProcessGone(pid_t pid) {
  if (pid <= 0) return false;  // 0 and negatives name process groups
  return kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace phaseloop::process
