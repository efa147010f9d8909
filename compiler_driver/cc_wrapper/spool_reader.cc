#include "compiler_driver/cc_wrapper/spool_reader.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/files/user_dirs.h"
#include "compiler_driver/cc_wrapper/spool_space.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/ir/module_loader.h"

namespace phaseloop::cc_wrapper {

std::string OutcomeName(v1::DecisionOutcome outcome) {
  // The enum's own names, lower-cased: "optimized", "pass_through", ...
  const std::string& name = v1::DecisionOutcome_Name(outcome);
  if (name.empty()) return absl::StrCat("outcome_", static_cast<int>(outcome));
  return absl::AsciiStrToLower(name);
}

absl::StatusOr<SpoolFile> ReadSpoolFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ir::ReadFile(path);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the spool file '", path, "': ", bytes.status().message()));
  }
  SpoolFile file;
  file.path = path;
  file.shipped = absl::EndsWith(path, kShippedSuffix);
  if (!file.batch.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path,
        "' is not a spool file (not a phaseloop.v1.DecisionBatch); pass a "
        "*.decisions or *.shipped file of a phaseloop-cc spool"));
  }
  // Every file the wrapper writes holds a record; an empty one was cut
  // short (a crash or power loss before the data reached the disk) and was
  // shipped as if whole.
  if (file.batch.decisions_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path,
        "' holds no decision record (cut short by a crash or a full disk?); "
        "inspect it, then delete it"));
  }
  return file;
}

absl::StatusOr<SpoolContents> ReadSpool(const std::string& dir,
                                        bool with_shipped) {
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
    if (absl::EndsWith(name, kSpoolSuffix) ||
        (with_shipped && absl::EndsWith(name, kShippedSuffix))) {
      names.push_back(name);
    }
  }
  closedir(handle);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    absl::StatusOr<SpoolFile> file = ReadSpoolFile(dir + "/" + name);
    if (!file.ok()) {
      contents.corrupt.push_back(dir + "/" + name);
      continue;
    }
    contents.files.push_back(*std::move(file));
  }
  return contents;
}

std::string FallbackSpoolNote(const std::string& spool,
                              const std::string& fallback_dir) {
  if (fallback_dir == spool) return "";
  // Only this user's own private directory, as phaseloop-cc uses it
  // (files::PerUserTmpDir): another user may have made the name first and
  // filled it, and the note would send planted records to be shipped.
  if (!files::IsOwnPrivateDir(fallback_dir)) return "";
  DIR* handle = opendir(fallback_dir.c_str());
  if (handle == nullptr) return "";
  int files = 0;
  while (dirent* entry = readdir(handle)) {
    if (absl::EndsWith(entry->d_name, kSpoolSuffix)) ++files;
  }
  closedir(handle);
  if (files == 0) return "";
  return absl::StrCat(
      "note: ", fallback_dir, " holds ", files, " unshipped record file",
      files == 1 ? "" : "s",
      " from compiles that found no home directory (HOME unset and the "
      "account not in /etc/passwd, e.g. Bazel actions of a directory-service "
      "account); read or ship them with --spool ",
      fallback_dir, "\n");
}

}  // namespace phaseloop::cc_wrapper
