#ifndef PHASELOOP_TOOLS_CONFIG_CONFIG_CHECK_COMMAND_H_
#define PHASELOOP_TOOLS_CONFIG_CONFIG_CHECK_COMMAND_H_

// `phaseloop config check FILE_OR_DIR... [--kind K] [--json]`
// (config_check.h). Exit 0 when every file is a valid config of its kind, 2
// when any is not (or cannot be read, or its kind cannot be told).

#include <iosfwd>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace phaseloop::config_check {

struct ConfigCheckFlags {
  std::vector<std::string> paths;
  std::string kind;  // "" = told by each file's keys
  bool json = false;
};

int RunConfigCheck(const ConfigCheckFlags& flags, std::ostream& out,
                   std::ostream& err);

void AddConfigCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::config_check

#endif  // PHASELOOP_TOOLS_CONFIG_CONFIG_CHECK_COMMAND_H_
