#ifndef PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_INPUTS_H_
#define PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_INPUTS_H_

// A workload's inputs, made once per staging and shared by every variant's
// runs: shipped files copied from the source tree, generated ones written by
// their generator (`sh -c GENERATE` with SEED and OUTPUT set, in the inputs
// directory). Runs see them hard-linked into their run directory, so a run
// must not modify its inputs; InputsUnchanged checks that it did not.

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::runner {

struct PreparedInputs {
  std::string dir;                 // each input at its `file` path
  std::vector<std::string> files;  // the workload's inputs, in order
  std::string hash;                // over every input's path and bytes
};

// Makes the inputs under `dir` (replaced when it exists). Each generator
// runs twice and must write the same bytes both times (its output is its
// seed's alone). A generator that fails, runs over 10 minutes, does not
// write its file or is not deterministic is FailedPrecondition naming the
// workload file and `inputs[i]`.
absl::StatusOr<PreparedInputs> PrepareInputs(
    const workloads::Workload& workload, const std::string& source_tree,
    const std::string& dir, std::ostream& progress);

// OK when the files under `dir` still hash to inputs.hash; DataLoss naming
// the run otherwise (a run that writes into its inputs cannot be compared).
absl::Status InputsUnchanged(const PreparedInputs& inputs,
                             const std::string& dir,
                             const std::string& after_what);

}  // namespace phaseloop::runner

#endif  // PHASELOOP_STAGING_HARNESS_RUNNER_WORKLOAD_INPUTS_H_
