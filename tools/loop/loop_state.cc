#include "tools/loop/loop_state.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "common/files/proto_json.h"
#include "common/files/state_ids.h"

namespace phaseloop::loop {

absl::Status CheckLoopId(const std::string& id) {
  return files::CheckStateId(id, "loop id", "the loop's state directory");
}

LoopStateStore::LoopStateStore(std::string state_dir)
    : state_dir_(std::move(state_dir)) {}

std::string LoopStateStore::LoopDir(const std::string& loop_id) const {
  return absl::StrCat(state_dir_, "/loops/", loop_id);
}

std::string LoopStateStore::IterationDir(const std::string& loop_id,
                                         int index) const {
  return absl::StrCat(LoopDir(loop_id), "/iteration-", index + 1);
}

std::string LoopStateStore::StatePath(const std::string& loop_id) const {
  return absl::StrCat(LoopDir(loop_id), "/state.json");
}

std::string LoopRunToJson(const v1::LoopRun& run) {
  return files::ProtoToJson(run);
}

absl::StatusOr<v1::LoopRun> LoopRunFromJson(const std::string& text,
                                            const std::string& source) {
  v1::LoopRun run;
  if (absl::Status parsed = files::ProtoFromJson(text, &run); !parsed.ok()) {
    return absl::DataLossError(absl::StrCat(
        source, ": not a loop state (", parsed.message(),
        "); it was written by another tool or damaged: move it aside and "
        "start the loop under a new --loop-id"));
  }
  return run;
}

absl::StatusOr<v1::LoopRun> LoopStateStore::Load(
    const std::string& loop_id) const {
  const std::string path = StatePath(loop_id);
  std::string text;
  if (!files::ReadWholeFile(path, &text).ok()) {
    return absl::NotFoundError(
        absl::StrCat("no loop '", loop_id, "' (", path, ")"));
  }
  return LoopRunFromJson(text, path);
}

absl::Status LoopStateStore::Save(const v1::LoopRun& run) const {
  if (auto status = CheckLoopId(run.loop_id()); !status.ok()) return status;
  if (auto status = files::MakeDirectories(LoopDir(run.loop_id()));
      !status.ok()) {
    return status;
  }
  return files::WriteFileAtomically(StatePath(run.loop_id()),
                                    LoopRunToJson(run));
}

absl::StatusOr<std::vector<v1::LoopRun>> LoopStateStore::List() const {
  std::vector<v1::LoopRun> runs;
  const std::vector<std::string> ids =
      files::ListStateIds(absl::StrCat(state_dir_, "/loops"));
  for (const std::string& id : ids) {
    auto run = Load(id);
    if (absl::IsNotFound(run.status())) continue;  // a directory being made
    if (!run.ok()) return run.status();
    runs.push_back(*std::move(run));
  }
  std::sort(runs.begin(), runs.end(),
            [](const v1::LoopRun& a, const v1::LoopRun& b) {
              if (a.created_ms() != b.created_ms()) {
                return a.created_ms() > b.created_ms();
              }
              return a.loop_id() < b.loop_id();
            });
  return runs;
}

}  // namespace phaseloop::loop
