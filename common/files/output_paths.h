#ifndef PHASELOOP_COMMON_FILES_OUTPUT_PATHS_H_
#define PHASELOOP_COMMON_FILES_OUTPUT_PATHS_H_

// What a command checks about the files it will write before it does any
// work. A black-box review found `train --out BUFFER` and `candidates mine
// --out BUFFER` replacing the replay buffer they read (exit 0), an empty
// `--out ""` writing into the root directory, and a directory given as
// --out found only after a whole training run (exit 1).

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace phaseloop::files {

struct FlagPath {
  std::string flag;  // as the user typed it, e.g. "--out"
  std::string path;
};

// InvalidArgument naming `flag` and the fix when `path` is empty, is a
// directory, or its directory does not exist.
absl::Status CheckOutputPath(const std::string& flag, const std::string& path);

// The same for each output, and no output the same file as another output
// or as an input (symbolic links and hard links followed; inputs that do
// not exist or are empty are skipped): every check before anything is
// written.
absl::Status CheckOutputPaths(const std::vector<FlagPath>& outputs,
                              const std::vector<FlagPath>& inputs = {});

// `path` made absolute, symbolic links resolved as far as they exist.
std::filesystem::path ResolvedPath(const std::string& path);

// Whether `a` and `b` name the same file (existing or not).
bool SameFile(const std::string& a, const std::string& b);

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_OUTPUT_PATHS_H_
