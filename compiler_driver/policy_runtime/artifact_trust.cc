#include "compiler_driver/policy_runtime/artifact_trust.h"

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "common/signing/signature.h"
#include "common/signing/trust_file.h"
#include "compiler_driver/policy_runtime/shipped_policy_digest.h"

namespace phaseloop::policy_runtime {

bool IsShippedDefaultPolicy(absl::string_view artifact_file) {
  return signing::Sha256Hex(artifact_file) == kShippedPolicySha256;
}

absl::Status CheckArtifactTrust(absl::string_view artifact_file,
                                const std::string& artifact_path,
                                const std::string& trust_file) {
  if (trust_file.empty()) return absl::OkStatus();
  absl::StatusOr<signing::TrustedKeys> trust =
      signing::TrustedKeys::Read(trust_file);
  if (!trust.ok()) {
    return signing::UntrustedError(
        absl::StrCat("cannot check the policy artifact ", artifact_path, ": ",
                     trust.status().message()));
  }
  std::string signature;
  absl::Status read = files::ReadWholeFile(
      signing::SignaturePathFor(artifact_path), &signature);
  if (!read.ok() && !absl::IsNotFound(read)) {
    return signing::UntrustedError(absl::StrCat(
        "cannot read the signature of ", artifact_path, ": ", read.message()));
  }
  absl::StatusOr<std::string> key_id =
      signing::VerifyArtifact(artifact_file, signature, *trust,
                              absl::StrCat("policy artifact ", artifact_path));
  if (key_id.ok()) return absl::OkStatus();
  // The shipped default needs no signature (see the header).
  if (IsShippedDefaultPolicy(artifact_file)) return absl::OkStatus();
  return key_id.status();
}

}  // namespace phaseloop::policy_runtime
