#ifndef PHASELOOP_CANARY_LOAD_LOAD_COMMAND_H_
#define PHASELOOP_CANARY_LOAD_LOAD_COMMAND_H_

// `phaseloop canary load --target NAME=HOST:PORT[:WEIGHT] ...
//  (--config FILE | --rate R (--duration-s S | --max-requests N) --mix
//  KIND:WEIGHT:BYTES[,...]) [--arrival uniform|poisson] [--seed N]
//  [--timeout-ms MS] [--max-in-flight N] [--max-error-rate F] [--json]`:
// drives open-loop load (open_loop_load.h) at the targets; a progress line
// on stderr every second; at the end a table (or --json) on stdout.
// Flags given with --config override the file's values. SIGINT/SIGTERM end
// the run early and still report.
//
// Exit codes: 0 the run finished (errors, if any, are in the report); 1 the
// share of intended requests that failed exceeded --max-error-rate (default
// 1: never), or an internal failure; 2 bad input (flags, config file,
// a target that does not resolve).

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace phaseloop::canary::load {

// Adds `load` to the `canary` command group.
void AddLoadCommand(CLI::App* canary, int& exit_code);

struct LoadFlags {
  std::vector<std::string> targets;
  std::string config;  // "" = from the flags alone
  // Given or not: with --config, only given flags override the file.
  std::optional<double> rate;
  std::optional<double> duration_s;
  std::optional<int64_t> max_requests;
  std::optional<std::string> mix;
  std::optional<std::string> arrival;
  std::optional<int64_t> seed;
  std::optional<double> timeout_ms;
  std::optional<int64_t> max_in_flight;
  double max_error_rate = 1;
  bool json = false;
  double progress_interval_s = 1;  // not a flag; tests shorten it
};

// `stop`: when it becomes true the run ends early (nullptr: never).
int RunLoad(const LoadFlags& flags, std::ostream& out, std::ostream& err,
            const std::atomic<bool>* stop);

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_LOAD_COMMAND_H_
