#include "common/files/report_output.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::files {
namespace fs = std::filesystem;

namespace {

bool IsInside(const fs::path& path, const fs::path& dir) {
  const std::string d = dir.string();
  const std::string p = path.string();
  return p.size() > d.size() && absl::StartsWith(p, d) &&
         (d.back() == '/' || p[d.size()] == '/');
}

}  // namespace

absl::Status CheckReportOutput(const std::string& flag, const std::string& path,
                               const std::string& state_dir) {
  if (absl::Status s = CheckOutputPath(flag, path); !s.ok()) return s;
  const fs::path resolved = ResolvedPath(path);
  if (!state_dir.empty() && IsInside(resolved, ResolvedPath(state_dir))) {
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
  }
  return CheckOutputPaths(outputs);
}

}  // namespace phaseloop::files
