#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_TRUST_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_TRUST_H_

// Whether the compile path may run a policy artifact: when a trust file is
// configured (PHASELOOP_TRUST_FILE, `trust_file =` in cc.conf), an artifact
// runs only if
//   - its detached signature `<artifact>.sig` (common/signing/signature.h)
//     is by a key the trust file lists and matches its bytes, or
//   - it is byte for byte the default policy this phaseloop was built with
//     (configs/policies/default.plpolicy, pinned by its SHA-256 at build
//     time): it comes with the binaries, as trusted as they are.
// Otherwise the caller fails open (plain clang) and counts the refusal by
// common/signing's reason: policy_unsigned (no .sig) or policy_untrusted
// (a bad, foreign or non-matching signature, or a trust file that cannot be
// read). No trust file: every artifact runs, as before. Thread-safe.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace phaseloop::policy_runtime {

// OK when `artifact_file` (read from `artifact_path`) may run under the
// trust file at `trust_file` ("" = none configured: always OK). Refusals
// are PermissionDenied with common/signing's SignatureRefusalReason set,
// naming the artifact, the trust file and the fix.
absl::Status CheckArtifactTrust(absl::string_view artifact_file,
                                const std::string& artifact_path,
                                const std::string& trust_file);

// True when `artifact_file` is the shipped default policy this binary was
// built with.
bool IsShippedDefaultPolicy(absl::string_view artifact_file);

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_TRUST_H_
