#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_TOOLCHAIN_COMMAND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_TOOLCHAIN_COMMAND_H_

#include "CLI/CLI.hpp"

namespace phaseloop::cc_wrapper {

// `phaseloop toolchain bazel --out DIR [--policy FILE] [--spool DIR]
// [--cc PATH]`: writes a Bazel toolchain package that compiles with
// phaseloop-cc (see bazel_toolchain.h) and prints the .bazelrc lines that
// select it. Sets exit_code: 0 written, 2 bad input, 1 internal failure.
void AddToolchainCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_TOOLCHAIN_COMMAND_H_
