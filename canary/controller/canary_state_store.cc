#include "canary/controller/canary_state_store.h"

#include "common/files/proto_json.h"
#include "common/files/state_ids.h"

namespace phaseloop::canary {

absl::Status CheckCanaryId(const std::string& id) {
  return files::CheckStateId(id, CanaryStateKind().id_name,
                             CanaryStateKind().owner);
}

bool IsFinalPhase(const std::string& phase) {
  return phase == "promoted" || phase == "rolled_back" || phase == "refused" ||
         phase == "aborted";
}

const files::StateKind& CanaryStateKind() {
  static const files::StateKind* kind = [] {
    auto* canaries = new files::StateKind;
    canaries->dir = "canaries";
    canaries->id_name = "canary id";
    canaries->owner = "the run's state directory";
    canaries->noun = "canary run";
    canaries->state_noun = "canary state";
    canaries->fresh_start = "run the canary again under a new --canary-id";
    return canaries;
  }();
  return *kind;
}

std::string CanaryRunToJson(const v1::CanaryRun& run) {
  return files::ProtoToJson(run);
}

absl::StatusOr<v1::CanaryRun> CanaryRunFromJson(const std::string& text,
                                                const std::string& source) {
  return files::StateFromJson<v1::CanaryRun>(text, source, CanaryStateKind());
}

}  // namespace phaseloop::canary
