#include "compiler_driver/cc_wrapper/spool_reader.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/ir/module_loader.h"

namespace phaseloop::cc_wrapper {

std::string OutcomeName(v1::DecisionOutcome outcome) {
  // The enum's own names, lower-cased: "optimized", "pass_through", ...
  return absl::AsciiStrToLower(v1::DecisionOutcome_Name(outcome));
}

absl::StatusOr<SpoolContents> ReadSpool(const std::string& dir) {
  SpoolContents contents;
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) {
    if (errno == ENOENT) return contents;
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the spool directory '", dir, "': ", std::strerror(errno)));
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(handle)) {
    std::string name = entry->d_name;
    if (absl::EndsWith(name, kSpoolSuffix)) names.push_back(name);
  }
  closedir(handle);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    absl::StatusOr<std::string> bytes = ir::ReadFile(path);
    SpoolFile file;
    file.path = path;
    if (!bytes.ok() || !file.batch.ParseFromString(*bytes)) {
      contents.corrupt.push_back(path);
      continue;
    }
    contents.files.push_back(std::move(file));
  }
  return contents;
}

}  // namespace phaseloop::cc_wrapper
