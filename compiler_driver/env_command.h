#ifndef PHASELOOP_COMPILER_DRIVER_ENV_COMMAND_H_
#define PHASELOOP_COMPILER_DRIVER_ENV_COMMAND_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace phaseloop::compiler_driver {

// `phaseloop env`: load one module, apply passes, print observations and
// baselines. `phaseloop actions`: list the action space.
struct EnvFlags {
  std::string input;
  std::string passes;
  std::string observe = "ir_count,text_size";
  std::string opt_level = "Oz";
  std::string convention = "real-build";
  std::vector<std::string> clang_flags;
  bool baselines = false;
  bool json = false;
};

void AddEnvCommand(CLI::App& app, int& exit_code);
void AddActionsCommand(CLI::App& app, int& exit_code);

// Runs `env` and writes to out/err; returns the process exit code
// (0 ok, 2 bad input, 1 internal failure).
int RunEnv(const EnvFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace phaseloop::compiler_driver

#endif  // PHASELOOP_COMPILER_DRIVER_ENV_COMMAND_H_
