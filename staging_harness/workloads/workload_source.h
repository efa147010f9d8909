#ifndef PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_SOURCE_H_
#define PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_SOURCE_H_

// Where a workload's program is: the directory each build copies.
//
// A local `source: <dir>` is that directory. A `source: debian:<package>` is
// the package's unpacked tree in the Debian source cache
// (corpus::DebianFetcher): downloaded with apt-get source and unpacked by
// dpkg-source on first use (network), read from the cache after that (no
// network). The tree in the cache is shared and must not be built in:
// callers copy it, as they copy a local source.

#include <iosfwd>
#include <string>

#include "absl/status/statusor.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::workloads {

// The source tree of `workload`, from corpus::DefaultDebianCache() for a
// Debian package. Errors name the workload file and its `source` (or
// `inputs[i].file`) field: a local directory that is gone, an invalid
// package name, a package that cannot be fetched, a shipped input the tree
// does not have. Progress of a download goes to `progress`.
absl::StatusOr<std::string> ResolveWorkloadSource(const Workload& workload,
                                                  std::ostream& progress);

// The same with an explicit Debian source cache directory (tests).
absl::StatusOr<std::string> ResolveWorkloadSource(const Workload& workload,
                                                  const std::string& cache,
                                                  std::ostream& progress);

}  // namespace phaseloop::workloads

#endif  // PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_SOURCE_H_
