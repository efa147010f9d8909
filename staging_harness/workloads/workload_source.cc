#include "staging_harness/workloads/workload_source.h"

#include <filesystem>
#include <ostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "staging_harness/corpus/debian_sources.h"

namespace phaseloop::workloads {
namespace {

namespace fs = std::filesystem;

// `status` with its message prefixed by the workload file and the field.
absl::Status InField(const Workload& workload, const std::string& field,
                     const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(workload.path, ": ", field,
                                                  ": ", status.message()));
}

// Shipped inputs of a Debian package's workload are files of its tree:
// checked here, once the tree exists (LoadWorkload checks a local source's).
absl::Status CheckShippedInputs(const Workload& workload,
                                const std::string& tree) {
  for (size_t i = 0; i < workload.inputs.size(); ++i) {
    const Input& input = workload.inputs[i];
    if (!input.generate.empty()) continue;
    std::error_code error;
    if (!fs::is_regular_file(fs::path(tree) / input.file, error)) {
      return absl::InvalidArgumentError(absl::StrCat(
          workload.path, ": inputs[", i, "].file: shipped input '", input.file,
          "' is not a file of ", tree, " (debian:", workload.debian_package,
          "); name a file of the package or generate the input"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ResolveWorkloadSource(const Workload& workload,
                                                  std::ostream& progress) {
  return ResolveWorkloadSource(workload, corpus::DefaultDebianCache(),
                               progress);
}

absl::StatusOr<std::string> ResolveWorkloadSource(const Workload& workload,
                                                  const std::string& cache,
                                                  std::ostream& progress) {
  if (workload.debian_package.empty()) {
    std::error_code error;
    if (workload.source_dir.empty() ||
        !fs::is_directory(workload.source_dir, error)) {
      return absl::NotFoundError(absl::StrCat(
          workload.path, ": source: '", workload.source_dir,
          "' is not a directory (any more); restore it or fix source, which "
          "is relative to the workload file"));
    }
    return workload.source_dir;
  }
  if (!IsDebianPackageName(workload.debian_package)) {
    return absl::InvalidArgumentError(absl::StrCat(
        workload.path, ": source: '", workload.debian_package,
        "' is not a Debian source package name (2 or more of a-z 0-9 + - ., "
        "starting with a letter or digit); write e.g. source: debian:bzip2"));
  }
  corpus::DebianFetcher fetcher(cache);
  absl::StatusOr<corpus::DebianSource> fetched =
      fetcher.Fetch(workload.debian_package, progress);
  if (!fetched.ok()) {
    return InField(
        workload, "source",
        absl::Status(
            fetched.status().code(),
            absl::StrCat("debian:", workload.debian_package, ": ",
                         fetched.status().message(), " (the cache is ", cache,
                         "; tools/fetch_sources.sh fills it)")));
  }
  if (absl::Status shipped = CheckShippedInputs(workload, fetched->tree);
      !shipped.ok()) {
    return shipped;
  }
  return fetched->tree;
}

}  // namespace phaseloop::workloads
