#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_CLIENT_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_CLIENT_H_

// The client library of `phaseloop policy serve`: a PolicyStore whose calls
// go over gRPC to a remote store, so callers use the same role whether the
// store is local or not. gRPC statuses become absl statuses here (same
// codes; UNAVAILABLE and DEADLINE_EXCEEDED say how to reach the server).
//
// Downloads are verified before they are returned: the artifact must parse
// (magic, format version, length, checksum, structure) and its content hash
// must be the version the server named (and the one asked for); anything
// else is DataLoss. Thread-safe.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "offline_rl/policy_store/policy_store.h"

namespace phaseloop::policy_store {

// Environment variable the `phaseloop policy` commands read when --store is
// not given.
inline constexpr char kPolicyStoreEnv[] = "PHASELOOP_POLICY_STORE";
// The file holding the token of a store that asks one (policy_store_service
// .h); every client reads it when set and no token is given otherwise.
inline constexpr char kPolicyStoreTokenFileEnv[] =
    "PHASELOOP_POLICY_STORE_TOKEN_FILE";

struct ClientOptions {
  absl::Duration call_timeout = absl::Seconds(60);
  // Sent with every call as `authorization: Bearer <token>`; "" = none.
  std::string token;
};

// A store at `address` ("host:port", as `phaseloop policy serve` prints).
// Connects lazily: an unreachable server shows up as Unavailable on the
// first call. Each call may take up to `options.call_timeout`. Signatures
// travel as they are (the store checks them; `phaseloop policy pull
// --trust-file` checks a download).
absl::StatusOr<std::unique_ptr<PolicyStore>> ConnectPolicyStore(
    const std::string& address, const ClientOptions& options);

// The same with the token from $PHASELOOP_POLICY_STORE_TOKEN_FILE when set
// (InvalidArgument naming the file when it cannot be read).
absl::StatusOr<std::unique_ptr<PolicyStore>> ConnectPolicyStore(
    const std::string& address,
    absl::Duration call_timeout = absl::Seconds(60));

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_POLICY_STORE_CLIENT_H_
