#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CLANG_EXEC_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CLANG_EXEC_H_

// What the launcher and the optimizer share about handing a command to
// plain clang: which driver, the phaseloop flags removed, the record of why,
// and exec. Standard library only.

#include <string>
#include <vector>

#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/cc_wrapper/wrapper_config.h"

namespace phaseloop::cc_wrapper {

// kCxx when the program name ends in "++" (phaseloop-c++, a symlink c++).
DriverKind DriverKindOf(const char* argv0);

// A binary in the directory of this process's executable.
std::string SiblingBinary(const std::string& name);

// Writes one launcher record to the spool (errors ignored: a lost record
// never fails a build). With PHASELOOP_VERBOSE set, also says it on stderr.
void Record(const WrapperConfig& config, const LauncherRecord& record);

// PHASELOOP_VERBOSE set to something other than "" or "0": the wrapper
// says on stderr why a command fell back (an empty value turned it on).
bool Verbose();

// Replaces this process with clang (config.clang / config.clangxx) and
// `args` — given as a response file (an anonymous one, @/proc/self/fd/N)
// when they are too long for a command line. Returns only if exec fails:
// 127 after a message, like a shell.
int ExecClang(const WrapperConfig& config, DriverKind kind,
              const std::vector<std::string>& args);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_CLANG_EXEC_H_
