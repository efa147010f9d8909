#include "tools/loop/loop_state.h"

#include "absl/strings/str_cat.h"
#include "common/files/proto_json.h"
#include "common/files/state_ids.h"

namespace phaseloop::loop {

absl::Status CheckLoopId(const std::string& id) {
  return files::CheckStateId(id, LoopStateKind().id_name,
                             LoopStateKind().owner);
}

const files::StateKind& LoopStateKind() {
  static const files::StateKind* kind = [] {
    auto* loops = new files::StateKind;
    loops->dir = "loops";
    loops->id_name = "loop id";
    loops->owner = "the loop's state directory";
    loops->noun = "loop";
    loops->state_noun = "loop state";
    loops->fresh_start = "start the loop under a new --loop-id";
    return loops;
  }();
  return *kind;
}

std::string LoopStateStore::IterationDir(const std::string& loop_id,
                                         int index) const {
  return absl::StrCat(LoopDir(loop_id), "/iteration-", index + 1);
}

bool StageDone(const v1::LoopIteration& it, const std::string& name) {
  for (const v1::LoopStage& stage : it.stages()) {
    if (stage.name() == name) return stage.status() == "done";
  }
  return false;
}

std::string GateVerdict(const v1::LoopIteration& it) {
  if (!StageDone(it, "train")) return "";
  return it.gate_passed() ? "passed" : "refused";
}

std::string LoopRunToJson(const v1::LoopRun& run) {
  return files::ProtoToJson(run);
}

absl::StatusOr<v1::LoopRun> LoopRunFromJson(const std::string& text,
                                            const std::string& source) {
  return files::StateFromJson<v1::LoopRun>(text, source, LoopStateKind());
}

}  // namespace phaseloop::loop
