#ifndef PHASELOOP_CANARY_CONTROLLER_CANARY_STATE_STORE_H_
#define PHASELOOP_CANARY_CONTROLLER_CANARY_STATE_STORE_H_

// Where a canary run's durable state lives: STATE_DIR/canaries/<id>/
// state.json, a v1::CanaryRun in protobuf JSON (proto/phaseloop/v1/
// canary.proto), replaced atomically (common/files/atomic_file) at every
// transition, so a controller killed at any instant leaves either the state
// before a transition or the state after it, never half of one.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/canary.pb.h"

namespace phaseloop::canary {

// A canary id is [A-Za-z0-9._-]{1,100} (it names a directory).
absl::Status CheckCanaryId(const std::string& id);

// True for promoted, rolled_back, refused and aborted.
bool IsFinalPhase(const std::string& phase);

class CanaryStateStore {
 public:
  explicit CanaryStateStore(std::string state_dir);

  std::string RunDir(const std::string& canary_id) const;
  std::string StatePath(const std::string& canary_id) const;

  // NotFound when the run has no state yet; DataLoss naming the file when
  // it cannot be parsed.
  absl::StatusOr<v1::CanaryRun> Load(const std::string& canary_id) const;
  // Atomically replaces the run's state (its directory is created).
  absl::Status Save(const v1::CanaryRun& run) const;
  // Every run under the state dir, newest first (by created_ms, then id);
  // a state file that cannot be parsed is an error naming it.
  absl::StatusOr<std::vector<v1::CanaryRun>> List() const;

 private:
  std::string state_dir_;
};

// The run as protobuf JSON (field names as in the proto, every field
// printed), and back.
std::string CanaryRunToJson(const v1::CanaryRun& run);
absl::StatusOr<v1::CanaryRun> CanaryRunFromJson(const std::string& text,
                                                const std::string& source);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_CANARY_STATE_STORE_H_
