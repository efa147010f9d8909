#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_JOBS_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_JOBS_COMMAND_H_

// `phaseloop search-jobs submit|work`: distributed search through Kafka
// (search_jobs.h). Exit codes: 0 ok, 1 failure, 2 bad input.

#include "CLI/CLI.hpp"

namespace phaseloop::search {

void AddSearchJobsCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_JOBS_COMMAND_H_
