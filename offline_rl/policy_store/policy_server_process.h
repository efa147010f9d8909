#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_SERVER_PROCESS_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_SERVER_PROCESS_H_

// A local policy store served for one controller's run (`phaseloop canary
// run`, `phaseloop loop` without --policy-store): `phaseloop policy serve
// --dir DIR` on loopback as a background process (common/process), its
// address read from the file it writes. A server that a killed controller
// left stopping may hold the directory a moment longer: that is waited for
// (up to 30 s, said when it starts), any other failure is not.

#include <atomic>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "common/process/background_process.h"

namespace phaseloop::policy_store {

// `phaseloop`: the binary to run; `files_prefix`: where its address file
// and log go (PREFIX.address, PREFIX.log). Returns HOST:PORT. `progress`
// (when given) is told once that the store is in use and waited for: the
// wait was silent for its 30 s.
absl::StatusOr<std::string> ServePolicyDirectory(
    const std::string& phaseloop, const std::string& dir,
    const std::string& files_prefix, const std::atomic<bool>* stop,
    process::BackgroundProcess* started, std::ostream* progress = nullptr);

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_SERVER_PROCESS_H_
