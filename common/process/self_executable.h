#ifndef PHASELOOP_COMMON_PROCESS_SELF_EXECUTABLE_H_
#define PHASELOOP_COMMON_PROCESS_SELF_EXECUTABLE_H_

// Where this process's binary is, and the phaseloop binaries installed or
// built beside it: the one place that reads /proc/self/exe to find them.
// Standard library only (phaseloop-cc's launcher links it).

#include <string>
#include <vector>

namespace phaseloop::process {

// This process's executable, symlinks resolved; "" when /proc/self/exe
// cannot be read.
std::string SelfExecutable();

// The first of `relative_paths` (relative to `dir`; "" means the directory
// of SelfExecutable()) that is an executable file, as a normalised path;
// "" when none is.
std::string ExecutableBeside(const std::vector<std::string>& relative_paths,
                             const std::string& dir = "");

// phaseloop-cc beside `dir` (an installed bin directory; "" means this
// executable's), else where Bazel puts it relative to bazel-bin/tools; ""
// when neither exists.
std::string PhaseloopCcBeside(const std::string& dir = "");

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_SELF_EXECUTABLE_H_
