#ifndef PHASELOOP_COMMON_SIGNING_SIGNATURE_H_
#define PHASELOOP_COMMON_SIGNING_SIGNATURE_H_

// Detached ed25519 signatures of policy artifact files. A signature covers
// the artifact file's exact bytes (Ed25519ph over a domain-separation line
// and the bytes), so anything that changes what a reader loads breaks it.
// It travels next to the artifact as `<artifact>.sig` (the artifact format
// is unchanged: unsigned artifacts and older readers keep working), in the
// policy store beside the stored artifact, and in the gRPC messages that
// carry artifacts. The .sig file is text:
//
//   phaseloop-policy-signature v1
//   key_id <16 hex>
//   ed25519ph <128 hex>
//
// Refusals are PermissionDenied statuses whose message names the artifact,
// what is wrong and what to do; SignatureRefusalReason tells an unsigned
// artifact from a wrongly signed one (the wrapper counts them apart).
// Thread-safe.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/signing/keys.h"
#include "common/signing/trust_file.h"

namespace phaseloop::signing {

inline constexpr char kSignatureHeader[] = "phaseloop-policy-signature v1";
inline constexpr char kSignatureSuffix[] = ".sig";
// Decision reasons (decision.proto) of the two refusals.
inline constexpr char kReasonUnsigned[] = "policy_unsigned";
inline constexpr char kReasonUntrusted[] = "policy_untrusted";

// "<artifact_path>.sig".
std::string SignaturePathFor(absl::string_view artifact_path);

// The .sig text for `artifact_file` signed by `key`. Deterministic.
std::string SignArtifact(absl::string_view artifact_file,
                         const SigningKey& key);

// The key id a .sig names; InvalidArgument when it is not a signature.
absl::StatusOr<std::string> SignatureKeyId(absl::string_view signature,
                                           absl::string_view artifact_name);

// Checks `signature` (.sig text; empty = unsigned) over `artifact_file`
// against `trusted`. Returns the signing key's id; PermissionDenied when
// unsigned, malformed, signed by a key not in `trusted`, or not matching
// the bytes (tampered or truncated artifact). `artifact_name` names the
// artifact in messages.
absl::StatusOr<std::string> VerifyArtifact(absl::string_view artifact_file,
                                           absl::string_view signature,
                                           const TrustedKeys& trusted,
                                           absl::string_view artifact_name);

// The PermissionDenied VerifyArtifact returns for an unsigned artifact,
// for callers that find no signature before they verify.
absl::Status UnsignedError(absl::string_view artifact_name,
                           const TrustedKeys& trusted);

// A PermissionDenied refusal (kReasonUntrusted) with `message`: for a trust
// file that cannot be read, so nothing can be trusted.
absl::Status UntrustedError(std::string message);

// Lowercase hex SHA-256 of `bytes` (what `sha256sum` prints), for pinning
// a file by content.
std::string Sha256Hex(absl::string_view bytes);

// kReasonUnsigned or kReasonUntrusted for a refusal of VerifyArtifact /
// UnsignedError; "" for any other status.
std::string SignatureRefusalReason(const absl::Status& status);

}  // namespace phaseloop::signing

#endif  // PHASELOOP_COMMON_SIGNING_SIGNATURE_H_
