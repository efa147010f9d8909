#include "canary/controller/canary_state_store.h"

#include <dirent.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "common/files/proto_json.h"

namespace phaseloop::canary {

absl::Status CheckCanaryId(const std::string& id) {
  const bool valid_chars = std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
  if (id.empty() || id.size() > 100 || !valid_chars || id[0] == '.') {
    return absl::InvalidArgumentError(absl::StrCat(
        "canary id '", id,
        "' is not usable: use 1-100 characters of A-Z a-z 0-9 . _ - not "
        "starting with '.' (it names the run's state directory)"));
  }
  return absl::OkStatus();
}

bool IsFinalPhase(const std::string& phase) {
  return phase == "promoted" || phase == "rolled_back" || phase == "refused" ||
         phase == "aborted";
}

CanaryStateStore::CanaryStateStore(std::string state_dir)
    : state_dir_(std::move(state_dir)) {}

std::string CanaryStateStore::RunDir(const std::string& canary_id) const {
  return absl::StrCat(state_dir_, "/canaries/", canary_id);
}

std::string CanaryStateStore::StatePath(const std::string& canary_id) const {
  return absl::StrCat(RunDir(canary_id), "/state.json");
}

std::string CanaryRunToJson(const v1::CanaryRun& run) {
  return files::ProtoToJson(run);
}

absl::StatusOr<v1::CanaryRun> CanaryRunFromJson(const std::string& text,
                                                const std::string& source) {
  v1::CanaryRun run;
  if (absl::Status parsed = files::ProtoFromJson(text, &run); !parsed.ok()) {
    return absl::DataLossError(absl::StrCat(
        source, ": not a canary state (", parsed.message(),
        "); it was written by another tool or damaged: move it aside and "
        "run the canary again under a new --canary-id"));
  }
  return run;
}

absl::StatusOr<v1::CanaryRun> CanaryStateStore::Load(
    const std::string& canary_id) const {
  const std::string path = StatePath(canary_id);
  std::string text;
  if (!files::ReadWholeFile(path, &text).ok()) {
    return absl::NotFoundError(
        absl::StrCat("no canary run '", canary_id, "' (", path, ")"));
  }
  return CanaryRunFromJson(text, path);
}

absl::Status CanaryStateStore::Save(const v1::CanaryRun& run) const {
  if (auto status = CheckCanaryId(run.canary_id()); !status.ok()) {
    return status;
  }
  if (auto status = files::MakeDirectories(RunDir(run.canary_id()));
      !status.ok()) {
    return status;
  }
  return files::WriteFileAtomically(StatePath(run.canary_id()),
                                    CanaryRunToJson(run));
}

absl::StatusOr<std::vector<v1::CanaryRun>> CanaryStateStore::List() const {
  std::vector<v1::CanaryRun> runs;
  const std::string root = absl::StrCat(state_dir_, "/canaries");
  DIR* dir = opendir(root.c_str());
  if (dir == nullptr) return runs;  // no canary has run here yet
  std::vector<std::string> ids;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (CheckCanaryId(name).ok()) ids.push_back(name);
  }
  closedir(dir);
  for (const std::string& id : ids) {
    auto run = Load(id);
    if (absl::IsNotFound(run.status())) continue;  // a directory being made
    if (!run.ok()) return run.status();
    runs.push_back(*std::move(run));
  }
  std::sort(runs.begin(), runs.end(),
            [](const v1::CanaryRun& a, const v1::CanaryRun& b) {
              if (a.created_ms() != b.created_ms()) {
                return a.created_ms() > b.created_ms();
              }
              return a.canary_id() < b.canary_id();
            });
  return runs;
}

}  // namespace phaseloop::canary
