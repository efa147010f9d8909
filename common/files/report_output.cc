#include "common/files/report_output.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::files {
namespace fs = std::filesystem;

namespace {

// `path` made absolute, links resolved as far as they exist.
fs::path Resolved(const std::string& path) {
  std::error_code error;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path, error), error);
  return error ? fs::absolute(path) : resolved;
}

bool IsInside(const fs::path& path, const fs::path& dir) {
  const std::string d = dir.string();
  const std::string p = path.string();
  return p.size() > d.size() && absl::StartsWith(p, d) &&
         (d.back() == '/' || p[d.size()] == '/');
}

}  // namespace

absl::Status CheckReportOutput(const std::string& flag, const std::string& path,
                               const std::string& state_dir) {
  std::error_code error;
  const fs::path resolved = Resolved(path);
  if (fs::is_directory(resolved, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " ", path, ": is a directory; give a file path, e.g. ",
        (fs::path(path) / "report.html").string()));
  }
  if (!fs::is_directory(resolved.parent_path(), error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " ", path, ": its directory ", resolved.parent_path().string(),
        " does not exist; create it first"));
  }
  if (!state_dir.empty() && IsInside(resolved, Resolved(state_dir))) {
    const std::string name = resolved.filename().string();
    const bool report =
        (absl::EndsWith(name, ".html") || absl::EndsWith(name, ".json")) &&
        name != "state.json";
    if (!report) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " ", path, ": is inside the state directory ", state_dir,
          ", where only .html and .json reports may be written (not a run's "
          "state.json, the buffer or a policy: a report over one destroys "
          "it); write the report elsewhere or leave ",
          flag, " out"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckReportOutputs(const std::vector<ReportOutput>& outputs,
                                const std::string& state_dir) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    absl::Status s =
        CheckReportOutput(outputs[i].flag, outputs[i].path, state_dir);
    if (!s.ok()) return s;
    for (size_t j = 0; j < i; ++j) {
      if (Resolved(outputs[i].path) == Resolved(outputs[j].path)) {
        return absl::InvalidArgumentError(absl::StrCat(
            outputs[j].flag, " and ", outputs[i].flag, " name the same file (",
            outputs[i].path, "): give each its own"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace phaseloop::files
