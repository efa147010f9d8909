#ifndef PHASELOOP_OFFLINE_RL_CANDIDATES_CANDIDATES_COMMAND_H_
#define PHASELOOP_OFFLINE_RL_CANDIDATES_CANDIDATES_COMMAND_H_

// `phaseloop candidates mine`: see candidate_mining.h.

#include <iosfwd>

#include "CLI/CLI.hpp"
#include "offline_rl/candidates/candidate_mining.h"

namespace phaseloop::candidates {

struct MineFlags {
  MineOptions options;
  bool no_episodes = false;
  std::string codegen_variants;  // e.g. "machine-outliner"; "" = none
  std::vector<std::string> fixed_candidates;  // NAME=PIPELINE
  bool json = false;
};

// Exit codes: 0 ok, 1 internal error, 2 bad input.
int RunMine(const MineFlags& flags, std::ostream& out, std::ostream& err);

void AddCandidatesCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::candidates

#endif  // PHASELOOP_OFFLINE_RL_CANDIDATES_CANDIDATES_COMMAND_H_
