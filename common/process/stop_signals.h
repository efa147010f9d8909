#ifndef PHASELOOP_COMMON_PROCESS_STOP_SIGNALS_H_
#define PHASELOOP_COMMON_PROCESS_STOP_SIGNALS_H_

// Children a stopped command must not leave behind. A measured run (its own
// process group) and a build under timeout(1) (which makes a group of its
// own) are out of a terminal's Ctrl-C reach: a command stopped by SIGINT or
// SIGTERM while one ran left it running, writing into a work directory the
// next run would use.

#include <sys/types.h>

namespace phaseloop::process {

// Process-wide: from now on SIGINT and SIGTERM kill (SIGKILL) every
// registered child's process group, or the child alone when it leads none,
// then end this process by the same signal (exit status 128 + signal).
void KillChildrenOnStopSignals();

// Registers a running child (async-signal-safe bookkeeping, up to 64 at
// once; more are not registered). Unregister it before reaping it.
void AddStoppableChild(pid_t pid);
void RemoveStoppableChild(pid_t pid);

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_STOP_SIGNALS_H_
