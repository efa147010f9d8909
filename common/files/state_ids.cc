#include "common/files/state_ids.h"

#include <dirent.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace phaseloop::files {

absl::Status CheckStateId(const std::string& id, const std::string& what,
                          const std::string& owner) {
  const bool valid_chars = std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
  if (id.empty() || id.size() > 100 || !valid_chars || id[0] == '.') {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " '", id,
        "' is not usable: use 1-100 characters of A-Z a-z 0-9 . _ - not "
        "starting with '.' (it names ",
        owner, ")"));
  }
  return absl::OkStatus();
}

std::vector<std::string> ListStateIds(const std::string& root) {
  std::vector<std::string> ids;
  DIR* dir = opendir(root.c_str());
  if (dir == nullptr) return ids;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (CheckStateId(name, "", "").ok()) ids.push_back(name);
  }
  closedir(dir);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace phaseloop::files
