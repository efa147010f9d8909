#ifndef PHASELOOP_OFFLINE_RL_EVALUATION_EVAL_COMMAND_H_
#define PHASELOOP_OFFLINE_RL_EVALUATION_EVAL_COMMAND_H_

// `phaseloop eval --policy P --corpus DIR [--mode single|topk]
//  [--budget INSTRUCTIONS] [--k K] [--split S] [--threads N] [--max-modules N]
//  [--fixed PIPELINE]... [--no-fixed] [--json]`: see policy_evaluation.h.

#include <cstdint>
#include <iosfwd>

#include "CLI/CLI.hpp"
#include "offline_rl/evaluation/policy_evaluation.h"

namespace phaseloop::evaluation {

struct EvalFlags {
  EvalOptions options;
  bool json = false;
  int64_t budget_ms = -1;          // deprecated --budget-ms; -1: not given
  std::vector<std::string> fixed;  // --fixed; empty: the default references
  bool no_fixed = false;           // --no-fixed
  bool budget_given = false;       // --budget was on the command line
};

// Exit codes: 0 ok, 1 internal error, 2 bad input (flags, policy, corpus).
int RunEval(const EvalFlags& flags, std::ostream& out, std::ostream& err);

void AddEvalCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::evaluation

#endif  // PHASELOOP_OFFLINE_RL_EVALUATION_EVAL_COMMAND_H_
