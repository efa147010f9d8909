#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_INTERRUPT_CLEANUP_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_INTERRUPT_CLEANUP_H_

// A compile interrupted by SIGHUP, SIGINT, SIGQUIT or SIGTERM sent to the
// wrapper alone (a build tool stopping its jobs, a terminal closing) ends
// as clang's would: the optimiser's running child is killed, the files the
// wrapper staged under temporary names are removed, and the process dies of
// the signal. Before, the child ran on to the end, reparented to init, and
// left a full-size `OBJ.phaseloop-XXXX` that `make clean` never removes.

#include <string>

namespace phaseloop::cc_wrapper {

// Installs the handlers for this process (its forked children die of the
// signal without touching the files). Call once, before any fork.
void InstallInterruptCleanup();

// A file the handler removes until it is forgotten (renamed into place or
// removed by the wrapper itself). Signals are held off while the list
// changes.
void StageForInterruptCleanup(const std::string& path);
void ForgetForInterruptCleanup(const std::string& path);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_INTERRUPT_CLEANUP_H_
