#include "staging_harness/workloads/workload_files.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace phaseloop::workloads {
namespace fs = std::filesystem;

std::vector<std::string> ListWorkloadFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".yaml") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<std::string> WorkloadFileFor(const std::string& name,
                                            const std::string& dir) {
  if (absl::EndsWith(name, ".yaml") || absl::StrContains(name, "/")) {
    return name;
  }
  const std::string path = dir + "/" + name + ".yaml";
  if (fs::exists(path)) return path;
  std::vector<std::string> names;
  for (const std::string& file : ListWorkloadFiles(dir)) {
    names.push_back(fs::path(file).stem().string());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--workload ", name, ": no ", path, "; workloads there: ",
                   names.empty() ? "none (run from the checkout's root or give "
                                   "--workloads-dir)"
                                 : absl::StrJoin(names, ", ")));
}

}  // namespace phaseloop::workloads
