#ifndef PHASELOOP_COMMON_FILES_REPORT_OUTPUT_H_
#define PHASELOOP_COMMON_FILES_REPORT_OUTPUT_H_

// Where a report command (`phaseloop report`, `canary report`) may write.
// A report written over a run's state.json, the replay buffer or a policy
// in the state directory destroyed it, exit 0 (black-box review); one
// output over the other, or the second refused after the first was
// written, left a half-done pair.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/files/output_paths.h"

namespace phaseloop::files {

// InvalidArgument naming `flag` and the fix when `path` is a directory, its
// directory does not exist, or it lies inside `state_dir` (when given)
// and is not an .html or .json file other than a state.json. Symbolic
// links are followed.
absl::Status CheckReportOutput(const std::string& flag, const std::string& path,
                               const std::string& state_dir);

// The same for several outputs at once, and no two the same file: every
// output is checked before any is written.
using ReportOutput = FlagPath;
absl::Status CheckReportOutputs(const std::vector<ReportOutput>& outputs,
                                const std::string& state_dir);

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_REPORT_OUTPUT_H_
