#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_SURVEY_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_SURVEY_COMMAND_H_

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::search {

// `phaseloop survey`: for every C/C++ program in a directory, the O0/O3/Oz
// baselines and a short greedy search from the unoptimised module, with
// `text_oz_ratio` and `geomean_oz_ratio` over the set.
struct SurveyFlags {
  std::string corpus;  // required: a path in the source tree was no default
                       // an installed phaseloop could use
  std::string objective = "ir_count";
  double budget_seconds = 2.0;
  bool json = false;
};

void AddSurveyCommand(CLI::App& app, int& exit_code);

// Returns the exit code (0 ok, 2 bad input, 1 failure); progress goes to err.
int RunSurvey(const SurveyFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_SURVEY_COMMAND_H_
