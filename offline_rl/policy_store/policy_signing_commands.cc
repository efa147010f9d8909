// `phaseloop policy keygen|sign|verify`: keys and signatures of artifact
// files, offline (declared in policy_command.h; common/signing does the
// work).
#include <iostream>

#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/files/atomic_file.h"
#include "common/signing/keys.h"
#include "common/signing/signature.h"
#include "common/signing/trust_file.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "nlohmann/json.hpp"
#include "offline_rl/policy_store/policy_command.h"

namespace phaseloop::policy_store {
namespace {

int Fail(absl::string_view command, absl::string_view message,
         std::ostream& err) {
  err << "phaseloop policy " << command << ": " << message << "\n";
  return command::kExitBadInput;
}

}  // namespace

int RunPolicyKeygen(const PolicyFlags& flags, std::ostream& out,
                    std::ostream& err) {
  // "" wrote the key pair into the root directory (as root).
  if (flags.out.empty()) {
    return Fail("keygen",
                "--out is empty (an unset shell variable?): give the "
                "directory for the key files",
                err);
  }
  absl::StatusOr<signing::SigningKey> key =
      signing::WriteNewKeyPair(flags.out, flags.comment);
  if (!key.ok()) return Fail("keygen", key.status().message(), err);
  const std::string secret =
      absl::StrCat(flags.out, "/", signing::kSecretKeyFileName);
  const std::string pub =
      absl::StrCat(flags.out, "/", signing::kPublicKeyFileName);
  if (flags.json) {
    out << nlohmann::json{{"key_id", key->key_id},
                          {"secret_key", secret},
                          {"public_key", pub}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  out << "key " << key->key_id << "\n"
      << "  secret: " << secret
      << " (mode 0600; keep it out of version control, e.g. a CI secret)\n"
      << "  public: " << pub
      << " (a trust file naming this key alone; to trust it beside others, "
         "append its key line to your trust file)\n";
  return command::kExitOk;
}

int RunPolicySign(const PolicyFlags& flags, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<signing::SigningKey> key =
      signing::ReadSigningKeyFile(flags.key_file);
  if (!key.ok()) return Fail("sign", key.status().message(), err);
  std::string bytes;
  absl::Status read = files::ReadWholeFile(flags.file, &bytes);
  if (!read.ok()) return Fail("sign", read.message(), err);
  // Only what readers accept is worth a signature.
  absl::StatusOr<v1::PolicyArtifact> artifact =
      policy_runtime::ParsePolicyArtifactFile(bytes, flags.file);
  if (!artifact.ok()) return Fail("sign", artifact.status().message(), err);
  const std::string path = signing::SignaturePathFor(flags.file);
  absl::Status written =
      files::WriteFileAtomically(path, signing::SignArtifact(bytes, *key));
  if (!written.ok()) return Fail("sign", written.message(), err);
  if (flags.json) {
    out << nlohmann::json{{"signature", path},
                          {"key_id", key->key_id},
                          {"policy_version",
                           policy_runtime::PolicyVersionOf(*artifact)}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << "signed " << policy_runtime::PolicyVersionOf(*artifact)
        << " with key " << key->key_id << ": " << path << "\n";
  }
  return command::kExitOk;
}

int RunPolicyVerify(const PolicyFlags& flags, std::ostream& out,
                    std::ostream& err) {
  absl::StatusOr<signing::TrustedKeys> trust =
      signing::TrustedKeys::Read(flags.trust_file);
  if (!trust.ok()) return Fail("verify", trust.status().message(), err);
  std::string bytes;
  absl::Status read = files::ReadWholeFile(flags.file, &bytes);
  if (!read.ok()) return Fail("verify", read.message(), err);
  const std::string signature_path = flags.signature_file.empty()
                                         ? signing::SignaturePathFor(flags.file)
                                         : flags.signature_file;
  std::string signature;
  absl::Status signature_read =
      files::ReadWholeFile(signature_path, &signature);
  if (!signature_read.ok() && !absl::IsNotFound(signature_read)) {
    return Fail("verify", signature_read.message(), err);
  }
  absl::StatusOr<std::string> key_id =
      signing::VerifyArtifact(bytes, signature, *trust, flags.file);
  if (!key_id.ok()) {
    err << "phaseloop policy verify: "
        << signing::SignatureRefusalReason(key_id.status()) << ": "
        << key_id.status().message() << "\n";
    return command::kExitBadInput;
  }
  if (flags.json) {
    out << nlohmann::json{{"file", flags.file}, {"key_id", *key_id}}.dump(
               -1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << flags.file << ": signed by trusted key " << *key_id << "\n";
  }
  return command::kExitOk;
}

}  // namespace phaseloop::policy_store
