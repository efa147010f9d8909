#ifndef PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_FILES_H_
#define PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_FILES_H_

// How commands name workloads: `--workload NAME` is <dir>/NAME.yaml, a value
// ending in .yaml or holding a '/' is a path taken as it is.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::workloads {

// The *.yaml files directly under `dir`, sorted; empty when there are none
// or the directory cannot be read.
std::vector<std::string> ListWorkloadFiles(const std::string& dir);

// The file `name` stands for. InvalidArgument when a NAME has no file under
// `dir`, naming the file looked for and the workloads that are there.
absl::StatusOr<std::string> WorkloadFileFor(const std::string& name,
                                            const std::string& dir);

}  // namespace phaseloop::workloads

#endif  // PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_FILES_H_
