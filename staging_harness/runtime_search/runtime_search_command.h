#ifndef PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_COMMAND_H_

// `phaseloop search --objective runtime --workload W --budget S [--buffer DB]
// [--policy-out FILE] [--json] [--seed N] [--workloads-dir DIR] [--cc PATH]
// [--no-object-cache] [--profile FILE] [--candidate-cflags FLAGS]
// [--link-flags FLAGS] [--bolt [--bolt-input-seed N]]`
// (search_command.cc routes here). Live progress on stderr; the table or
// JSON on stdout. Exit 0 searched (with or without a gain), 1 internal
// error, 2 bad input or an unusable workload, 3 a pipeline miscompile was
// found (recorded and blocked; the rest of the search and its outputs are
// still complete), as `phaseloop stage`. A BOLT rewrite that changed the
// outputs (--bolt) is its row's verdict, not exit 3: no pipeline is at
// fault.

#include <cstdint>
#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"
#include "staging_harness/runner/build_options.h"

namespace phaseloop::runtime_search {

struct RuntimeSearchFlags {
  std::string workload;              // name under workloads_dir, or a YAML path
  runner::WorkloadBuildFlags build;  // --workloads-dir, --cc, --link-flags
  std::string policy_out;            // the winning table policy
  std::string work_dir;              // "" = $TMPDIR/phaseloop-runtime-search
  double confirm_budget_s = 120;
  int runoff_contenders = 2;
  double runoff_budget_s = 120;
  bool count_executed = false;
  int max_modules = 3;
  double coverage = 0.9;
  int cpu = -1;
  bool keep_builds = false;
  bool no_object_cache = false;
  std::string profile;  // an execution profile every evaluation is built with
  std::string candidate_cflags;  // more flags for every evaluation's build
  bool bolt = false;             // step 5: BOLT on top of the pick
  int64_t bolt_input_seed = -1;  // BOLT's training inputs (-1: the timed)
  // Shared with the other objectives' flags (search_command.h).
  std::string buffer;
  double budget_s = 300;
  int64_t max_evaluations = 0;
  uint64_t seed = 1;
  bool json = false;
};

// The runtime-only options, added to `phaseloop search`.
void AddRuntimeSearchOptions(CLI::App& search, RuntimeSearchFlags& flags);

int RunRuntimeSearchCommand(const RuntimeSearchFlags& flags, std::ostream& out,
                            std::ostream& err);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_COMMAND_H_
