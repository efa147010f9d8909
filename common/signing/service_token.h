#ifndef PHASELOOP_COMMON_SIGNING_SERVICE_TOKEN_H_
#define PHASELOOP_COMMON_SIGNING_SERVICE_TOKEN_H_

// Bearer tokens a service asks of callers that change its state (the policy
// store's push, promote, rollback and mark when it listens beyond loopback).
// A token file holds one line: the token, at least kMinTokenBytes printable
// characters without spaces (e.g. `head -c 32 /dev/urandom | base64`).
// Clients send it as gRPC metadata `authorization: Bearer <token>`.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::signing {

inline constexpr size_t kMinTokenBytes = 16;
inline constexpr char kAuthorizationMetadata[] = "authorization";
inline constexpr char kBearerPrefix[] = "Bearer ";

// The token in `path` (trailing newline removed). InvalidArgument naming
// the file when it cannot be read, is empty, too short, or holds more than
// one line or spaces.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Compares in time independent of where they differ (libsodium).
bool TokensEqual(absl::string_view a, absl::string_view b);

}  // namespace phaseloop::signing

#endif  // PHASELOOP_COMMON_SIGNING_SERVICE_TOKEN_H_
