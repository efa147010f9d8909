#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_COMMAND_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "staging_harness/runtime_search/runtime_search_command.h"

namespace phaseloop::search {

// `phaseloop search`: pass-order search over a corpus or files with one
// strategy and objective, in parallel over session workers; every trajectory
// is logged to an episode file, the best sequence per module to a
// best-sequences file; a table (or JSON) with -Oz comparisons.
struct SearchFlags {
  std::string corpus;
  std::vector<std::string> inputs;
  std::string split;  // corpus manifest split, e.g. "validation"; "" = all
  std::string strategy = "random";
  std::string objective = "alloc_size";
  double budget_seconds = 10;
  int64_t max_evaluations = 0;  // per module; 0 = no limit but the clock
  int64_t max_ir_count = 0;     // skip larger modules (manifest ir_count_o0)
  std::string run_id;           // episode id prefix; "" = random
  int workers = 0;              // 0: hardware threads
  std::string episodes_out;
  std::string best_in;
  std::string best_out;  // "" = <episodes_out>.best.json
  // Replay buffer whose block list the search respects: a (module,
  // pipeline) pair a miscompile blamed is never reported as best nor
  // written to the best-sequences file (the next best is). "" = none.
  std::string buffer;
  bool json = false;
  uint64_t seed = 1;
  int episode_length = 40;
  int beam_width = 4;
  int neighbours = 3;
  std::string worker_binary;  // "" = next to this binary
  double step_timeout_seconds = 60;
  // --objective runtime: a workload's per-module pipelines, each evaluation
  // a rebuild and a staged run (runtime_search_command.h); --budget is then
  // the whole search's seconds.
  runtime_search::RuntimeSearchFlags runtime;
};

void AddSearchCommand(CLI::App& app, int& exit_code);

// The session worker beside this executable (installed as
// phaseloop-session-worker), else where Bazel puts it relative to
// bazel-bin/tools/phaseloop; "" if neither.
std::string DefaultWorkerBinary();

// Returns the exit code (0 ok, 2 bad input, 1 failure); progress goes to err.
int RunSearchCommand(const SearchFlags& flags, std::ostream& out,
                     std::ostream& err);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_COMMAND_H_
