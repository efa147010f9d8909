#include "tools/loop/loop_state.h"

#include "absl/container/flat_hash_set.h"
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

std::vector<std::string> PublishedVersions(const v1::LoopRun& run) {
  std::vector<std::string> versions;
  for (const v1::LoopIteration& it : run.iterations()) {
    if (StageDone(it, "publish") && !it.candidate_version().empty()) {
      versions.push_back(it.candidate_version());
    }
  }
  return versions;
}

absl::Status CheckResumedStore(const v1::LoopRun& before,
                               const std::string& given,
                               const std::vector<std::string>& held) {
  const absl::flat_hash_set<std::string> holds(held.begin(), held.end());
  for (const std::string& version : PublishedVersions(before)) {
    if (holds.contains(version)) continue;
    if (given == before.policy_store()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "loop ", before.loop_id(), " published the version ", version,
          " to the store at ", given,
          ", and the store answering there now does not hold it: it is "
          "another store (started on an empty directory?); give the loop's "
          "store, or start another loop with --loop-id"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "loop ", before.loop_id(), " keeps its policies in the store at ",
        before.policy_store(), ", and the store at ", given,
        " does not hold the version ", version,
        " it published there: it is another store; pass ",
        before.policy_store(),
        " (or an address of the same store), or start another loop with "
        "--loop-id"));
  }
  return absl::OkStatus();
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
