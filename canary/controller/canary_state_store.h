#ifndef PHASELOOP_CANARY_CONTROLLER_CANARY_STATE_STORE_H_
#define PHASELOOP_CANARY_CONTROLLER_CANARY_STATE_STORE_H_

// Where a canary run's durable state lives: STATE_DIR/canaries/<id>/
// state.json, a v1::CanaryRun in protobuf JSON (proto/phaseloop/v1/
// canary.proto), replaced atomically at every transition
// (common/files/proto_state_store), so a controller killed at any instant
// leaves either the state before a transition or the state after it, never
// half of one.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/files/proto_state_store.h"
#include "phaseloop/v1/canary.pb.h"

namespace phaseloop::canary {

// A canary id is [A-Za-z0-9._-]{1,100} (it names a directory).
absl::Status CheckCanaryId(const std::string& id);

// True for promoted, rolled_back, refused and aborted.
bool IsFinalPhase(const std::string& phase);

// How canary runs are named on disk and in messages.
const files::StateKind& CanaryStateKind();

class CanaryStateStore
    : public files::ProtoStateStore<v1::CanaryRun, &v1::CanaryRun::canary_id> {
 public:
  explicit CanaryStateStore(std::string state_dir)
      : ProtoStateStore(std::move(state_dir), CanaryStateKind()) {}

  std::string RunDir(const std::string& canary_id) const {
    return Dir(canary_id);
  }
  // The lock the run's one controller holds while it drives the run.
  std::string ControllerLockPath(const std::string& canary_id) const {
    return Dir(canary_id) + "/controller.lock";
  }
};

// The run as protobuf JSON (field names as in the proto, every field
// printed), and back.
std::string CanaryRunToJson(const v1::CanaryRun& run);
absl::StatusOr<v1::CanaryRun> CanaryRunFromJson(const std::string& text,
                                                const std::string& source);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_CANARY_STATE_STORE_H_
