#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_DIRECTORY_POLICY_STORE_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_DIRECTORY_POLICY_STORE_H_

// The policy store kept in a directory (the PolicyStore role of
// policy_store.h), what `phaseloop policy serve` serves. Apart from the
// role, so the client (and the canary, which sees the store only through
// it) does not link the directory store.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/signing/trust_file.h"
#include "offline_rl/policy_store/policy_store.h"

namespace phaseloop::policy_store {

struct StoreOptions {
  // When set, every push and every read must carry a signature by one of
  // these keys (policy_store.h); when not, signatures are kept as pushed
  // (checked for form only) and handed out with their artifacts.
  std::shared_ptr<const signing::TrustedKeys> trust;
};

// The directory-backed store: artifacts in DIR/artifacts/<version>.plpolicy,
// their signatures beside them (<version>.plpolicy.sig, written before the
// index names the version), channels and the version list in
// DIR/index.json (replaced atomically).
// Creates DIR when missing. One store object owns a directory at a time
// (an exclusive lock on DIR/.lock, released when the object is destroyed
// or its process dies): a second open is FailedPrecondition. An index from
// a newer phaseloop or a damaged one is refused untouched. Indexes written
// before verdicts existed open as stores with no verdicts; an index that
// holds a verdict is written in a newer format, so a phaseloop that does
// not know verdicts refuses it instead of dropping them.
absl::StatusOr<std::unique_ptr<PolicyStore>> OpenPolicyStore(
    const std::string& dir, const StoreOptions& options = {});

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_DIRECTORY_POLICY_STORE_H_
