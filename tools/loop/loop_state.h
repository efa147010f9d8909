#ifndef PHASELOOP_TOOLS_LOOP_LOOP_STATE_H_
#define PHASELOOP_TOOLS_LOOP_LOOP_STATE_H_

// Where a loop's durable state lives: STATE_DIR/loops/<loop_id>/state.json,
// a v1::LoopRun in protobuf JSON (proto/phaseloop/v1/loop.proto), replaced
// atomically (common/files/proto_state_store) before and after every stage;
// each iteration's files (stage logs, the policy it trained, its buffers
// before they are merged) in STATE_DIR/loops/<loop_id>/iteration-<n>/.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/files/proto_state_store.h"
#include "phaseloop/v1/loop.pb.h"

namespace phaseloop::loop {

// A loop id is [A-Za-z0-9._-]{1,100} (it names a directory).
absl::Status CheckLoopId(const std::string& id);

// How loops are named on disk and in messages.
const files::StateKind& LoopStateKind();

class LoopStateStore
    : public files::ProtoStateStore<v1::LoopRun, &v1::LoopRun::loop_id> {
 public:
  explicit LoopStateStore(std::string state_dir)
      : ProtoStateStore(std::move(state_dir), LoopStateKind()) {}

  std::string LoopDir(const std::string& loop_id) const { return Dir(loop_id); }
  std::string IterationDir(const std::string& loop_id, int index) const;
};

// Whether `it`'s stage `name` ran to its end.
bool StageDone(const v1::LoopIteration& it, const std::string& name);

// What the publish gate said of an iteration's training: "passed",
// "refused", or "" while its train stage has not finished.
std::string GateVerdict(const v1::LoopIteration& it);

// The versions a loop pushed to its policy store: each iteration's
// candidate whose publish stage ran to its end, in order.
std::vector<std::string> PublishedVersions(const v1::LoopRun& run);

// Whether a resumed loop may use the policy store at `given` where its state
// names `before.policy_store()`, `held` being the versions `given` lists.
// Its earlier iterations moved channels in that store, so the store given
// must hold every version they published: then it is the same store by
// another name (localhost for 127.0.0.1, a new port) or a copy, and OK.
// FailedPrecondition naming the first missing version and both addresses
// otherwise — also for the same address (another store answers there).
absl::Status CheckResumedStore(const v1::LoopRun& before,
                               const std::string& given,
                               const std::vector<std::string>& held);

std::string LoopRunToJson(const v1::LoopRun& run);
absl::StatusOr<v1::LoopRun> LoopRunFromJson(const std::string& text,
                                            const std::string& source);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_LOOP_STATE_H_
