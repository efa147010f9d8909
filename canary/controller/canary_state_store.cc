#include "canary/controller/canary_state_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "common/files/proto_json.h"
#include "common/files/state_ids.h"

namespace phaseloop::canary {

absl::Status CheckCanaryId(const std::string& id) {
  return files::CheckStateId(id, "canary id", "the run's state directory");
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
  const std::vector<std::string> ids =
      files::ListStateIds(absl::StrCat(state_dir_, "/canaries"));
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
