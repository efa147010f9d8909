#include "compiler_driver/cc_wrapper/spool_reader.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/ir/module_loader.h"

namespace phaseloop::cc_wrapper {

std::string OutcomeName(v1::DecisionOutcome outcome) {
  switch (outcome) {
    case v1::OPTIMIZED: return "optimized";
    case v1::PASS_THROUGH: return "pass_through";
    case v1::FAIL_OPEN: return "fail_open";
    case v1::DISABLED: return "disabled";
    default: return "unspecified";
  }
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
