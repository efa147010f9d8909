#ifndef PHASELOOP_TOOLS_LOOP_LOOP_COMMAND_H_
#define PHASELOOP_TOOLS_LOOP_LOOP_COMMAND_H_

// `phaseloop loop`: the closed loop as one command (tools/loop/loop_runner.h).
// Exit 0 every iteration ended, 1 a stage failed (the message names it and
// its log; the same command resumes after the fix), 2 bad input, 75 stopped
// (the same command resumes).

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "common/command/exit_code.h"

namespace phaseloop::loop {

inline constexpr int kExitStopped = command::kExitStopped;

struct LoopFlags {
  std::string config = "configs/loop/demo.yaml";
  int iterations = 0;  // 0: the config's
  std::string loop_id;
  std::string state_dir;
  std::string buffer;
  std::string kafka;
  std::string policy_store;
  std::string policy_dir;
  std::string cc;
  bool json = false;
};

int RunLoop(const LoopFlags& flags, std::ostream& out, std::ostream& err);

void AddLoopCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_LOOP_COMMAND_H_
