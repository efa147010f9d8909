#include "common/files/output_paths.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace phaseloop::files {
namespace fs = std::filesystem;

std::filesystem::path ResolvedPath(const std::string& path) {
  std::error_code error;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path, error), error);
  return error ? fs::absolute(path) : resolved;
}

bool SameFile(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code error;
  if (fs::equivalent(a, b, error)) return true;  // hard links too
  return ResolvedPath(a) == ResolvedPath(b);
}

absl::Status CheckOutputPath(const std::string& flag, const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag,
                     " is empty: give a file path (an unset shell "
                     "variable?)"));
  }
  std::error_code error;
  const fs::path resolved = ResolvedPath(path);
  if (fs::is_directory(resolved, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " ", path, ": is a directory; give a file path in it"));
  }
  if (!fs::is_directory(resolved.parent_path(), error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " ", path, ": its directory ", resolved.parent_path().string(),
        " does not exist; create it first"));
  }
  return absl::OkStatus();
}

absl::Status CheckOutputPaths(const std::vector<FlagPath>& outputs,
                              const std::vector<FlagPath>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const FlagPath& output = outputs[i];
    if (absl::Status s = CheckOutputPath(output.flag, output.path); !s.ok()) {
      return s;
    }
    for (size_t j = 0; j < i; ++j) {
      if (SameFile(output.path, outputs[j].path)) {
        return absl::InvalidArgumentError(absl::StrCat(
            outputs[j].flag, " and ", output.flag, " name the same file (",
            output.path, "): give each its own"));
      }
    }
    for (const FlagPath& input : inputs) {
      if (SameFile(output.path, input.path)) {
        return absl::InvalidArgumentError(absl::StrCat(
            output.flag, " ", output.path, " is ", input.flag,
            "'s file: writing it would destroy what this command reads; "
            "give ",
            output.flag, " a path of its own"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace phaseloop::files
