#ifndef PHASELOOP_COMMON_PROCESS_PROCESS_GONE_H_
#define PHASELOOP_COMMON_PROCESS_PROCESS_GONE_H_

// Whether a pid left in a file name or a lock (a run's helper directory, a
// writer's temporary export) names no process on this machine any more.
// Only "no such process" counts: a process of another user (EPERM) is alive,
// and a pid of another machine or container cannot be told from a live one,
// so callers pair this with an age or a start time where that matters.

#include <sys/types.h>

namespace phaseloop::process {

bool ProcessGone(pid_t pid);

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_PROCESS_GONE_H_
