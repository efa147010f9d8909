#include "common/config/yaml_files.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace phaseloop::config {

absl::StatusOr<std::vector<FoundYaml>> FindYamlFiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<FoundYaml> found;
  std::error_code error;
  std::set<fs::path> listed = {fs::canonical(dir, error)};
  for (fs::recursive_directory_iterator
           it(dir, fs::directory_options::follow_directory_symlink, error),
       end;
       !error && it != end; it.increment(error)) {
    if (it->path().filename().string().rfind('.', 0) == 0) {
      it.disable_recursion_pending();
      continue;
    }
    std::error_code entry_error;
    const fs::file_type type = it->status(entry_error).type();
    if (type == fs::file_type::directory) {
      if (!listed.insert(fs::canonical(it->path(), entry_error)).second) {
        it.disable_recursion_pending();
      }
      continue;
    }
    const std::string extension = it->path().extension().string();
    if ((type == fs::file_type::regular || type == fs::file_type::not_found) &&
        (extension == ".yaml" || extension == ".yml")) {
      found.push_back({it->path().string(), it.depth()});
    }
  }
  if (error) {
    return absl::NotFoundError(
        absl::StrCat("cannot list ", dir, ": ", error.message()));
  }
  std::sort(
      found.begin(), found.end(),
      [](const FoundYaml& a, const FoundYaml& b) { return a.path < b.path; });
  return found;
}

}  // namespace phaseloop::config
