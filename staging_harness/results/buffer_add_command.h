#ifndef PHASELOOP_STAGING_HARNESS_RESULTS_BUFFER_ADD_COMMAND_H_
#define PHASELOOP_STAGING_HARNESS_RESULTS_BUFFER_ADD_COMMAND_H_

// `phaseloop buffer add`: puts a search's results into a replay buffer, so
// the learner can read them — the modules of corpora (with their split and
// -Oz/-O3 baselines, from manifest.json) and the episodes of episode files
// (with the best sequences they show). Idempotent (every write is an upsert
// by id); one transaction per batch, so a killed run leaves whole batches.
// Registered under the `buffer` command (AddBufferCommand must come first).

#include "CLI/CLI.hpp"

namespace phaseloop::search {

void AddBufferAddCommand(CLI::App& app, int& exit_code);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_RESULTS_BUFFER_ADD_COMMAND_H_
