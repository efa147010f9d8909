#include "common/kafka/state_dir.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/files/user_dirs.h"

namespace phaseloop::kafka {

std::string DefaultStateDir() {
  if (const char* dir = std::getenv("PHASELOOP_STATE_DIR"); dir && *dir) {
    return dir;
  }
  return files::UserDir(files::UserDirKind::kState, "");
}

std::string LostRecordsLogPath(const std::string& state_dir) {
  if (state_dir.empty()) return "";
  return state_dir + "/lost-records.jsonl";
}

std::string SpoolDirPath(const std::string& state_dir,
                         const std::string& name) {
  if (state_dir.empty()) return "";
  return absl::StrCat(state_dir, "/spool/", name);
}

}  // namespace phaseloop::kafka
