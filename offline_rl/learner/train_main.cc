// phaseloop-train: the learner's own binary (it links libtorch, which the
// `phaseloop` CLI must not: `phaseloop train` execs this). See
// train_command.h for the flags and exit codes.
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/command/command_line.h"
#include "common/protobuf/protobuf_logs.h"
#include "offline_rl/learner/openmp_env.h"
#include "offline_rl/learner/train_command.h"

int main(int argc, char** argv) {
  phaseloop::offline_rl::EnsurePassiveOpenMpWait(argv);
  // Every parse failure is reported with the file and the fix: libprotobuf
  // need not add its own line.
  phaseloop::protobuf::DropProtobufLogs();
  CLI::App app{
      "phaseloop train: learn a pass-ordering policy from a replay buffer "
      "(behaviour cloning or discrete CQL) and export the policy artifact"};
  app.name("phaseloop train");
  phaseloop::offline_rl::TrainFlags flags;
  phaseloop::offline_rl::AddTrainFlags(app, flags);
  flags.args.assign(argv + 1, argv + argc);
  // An unknown flag is named before any missing required one.
  if (const auto rc = phaseloop::command::ParseCommandLine(
          app, argc, argv, std::cout, std::cerr)) {
    return *rc;
  }
  return phaseloop::offline_rl::RunTrain(flags, std::cout, std::cerr);
}
