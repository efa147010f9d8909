#include "common/signing/signature.h"

#include <sodium.h>

#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace phaseloop::signing {
namespace {

// Signed before the bytes, so a signature made for anything else with the
// same key never verifies as an artifact's.
constexpr absl::string_view kDomain = "phaseloop policy artifact v1\n";
constexpr char kRefusalPayload[] = "phaseloop.signing/refusal";

absl::Status Refusal(absl::string_view reason, std::string message) {
  absl::Status status = absl::PermissionDeniedError(std::move(message));
  status.SetPayload(kRefusalPayload, absl::Cord(reason));
  return status;
}

struct ParsedSignature {
  std::string key_id;
  std::array<uint8_t, crypto_sign_BYTES> bytes{};
};

absl::StatusOr<ParsedSignature> ParseSignature(absl::string_view text,
                                               absl::string_view name) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the signature of ", name, " is malformed: ", what,
        "; sign the artifact again (phaseloop policy sign, or phaseloop "
        "train --signing-key)"));
  };
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line[0] != '#') lines.emplace_back(line);
  }
  if (lines.empty() || lines[0] != kSignatureHeader) {
    return error(
        absl::StrCat("the first line must be '", kSignatureHeader, "'"));
  }
  ParsedSignature parsed;
  std::string signature_hex;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields =
        absl::StrSplit(lines[i], ' ', absl::SkipEmpty());
    if (fields.size() == 2 && fields[0] == "key_id" && parsed.key_id.empty()) {
      parsed.key_id = fields[1];
    } else if (fields.size() == 2 && fields[0] == "ed25519ph" &&
               signature_hex.empty()) {
      signature_hex = fields[1];
    } else {
      return error(
          absl::StrCat("unexpected line '", lines[i].substr(0, 40), "'"));
    }
  }
  if (parsed.key_id.empty()) return error("no key_id line (truncated?)");
  if (!FromHex(signature_hex, parsed.bytes.data(), parsed.bytes.size())) {
    return error(
        "the ed25519ph line must hold 128 lowercase hex digits "
        "(truncated?)");
  }
  return parsed;
}

}  // namespace

std::string SignaturePathFor(absl::string_view artifact_path) {
  return absl::StrCat(artifact_path, kSignatureSuffix);
}

std::string SignArtifact(absl::string_view artifact_file,
                         const SigningKey& key) {
  (void)InitSodium();
  crypto_sign_state state;
  crypto_sign_init(&state);
  crypto_sign_update(&state,
                     reinterpret_cast<const unsigned char*>(kDomain.data()),
                     kDomain.size());
  crypto_sign_update(
      &state, reinterpret_cast<const unsigned char*>(artifact_file.data()),
      artifact_file.size());
  unsigned char signature[crypto_sign_BYTES];
  crypto_sign_final_create(&state, signature, nullptr, key.secret.data());
  return absl::StrCat(kSignatureHeader, "\nkey_id ", key.key_id, "\ned25519ph ",
                      ToHex(signature, sizeof signature), "\n");
}

absl::StatusOr<std::string> SignatureKeyId(absl::string_view signature,
                                           absl::string_view artifact_name) {
  absl::StatusOr<ParsedSignature> parsed =
      ParseSignature(signature, artifact_name);
  if (!parsed.ok()) return parsed.status();
  return parsed->key_id;
}

absl::Status UnsignedError(absl::string_view artifact_name,
                           const TrustedKeys& trusted) {
  return Refusal(
      kReasonUnsigned,
      absl::StrCat(artifact_name, " is not signed, and the trust file '",
                   trusted.source(),
                   "' asks for a signature; sign it with a trusted key "
                   "(phaseloop policy sign, or phaseloop train "
                   "--signing-key) and keep its .sig beside it"));
}

absl::StatusOr<std::string> VerifyArtifact(absl::string_view artifact_file,
                                           absl::string_view signature,
                                           const TrustedKeys& trusted,
                                           absl::string_view artifact_name) {
  if (absl::StripAsciiWhitespace(signature).empty()) {
    return UnsignedError(artifact_name, trusted);
  }
  absl::StatusOr<ParsedSignature> parsed =
      ParseSignature(signature, artifact_name);
  if (!parsed.ok()) {
    return Refusal(kReasonUntrusted, std::string(parsed.status().message()));
  }
  const PublicKey* key = trusted.Find(parsed->key_id);
  if (key == nullptr) {
    return Refusal(
        kReasonUntrusted,
        absl::StrCat(artifact_name, " is signed by key ", parsed->key_id,
                     ", which the trust file '", trusted.source(),
                     "' does not list (trusted: ", trusted.KeyIdList(),
                     "); add that key's line to the trust file if you trust "
                     "it, or sign with a trusted key"));
  }
  if (absl::Status init = InitSodium(); !init.ok()) return init;
  crypto_sign_state state;
  crypto_sign_init(&state);
  crypto_sign_update(&state,
                     reinterpret_cast<const unsigned char*>(kDomain.data()),
                     kDomain.size());
  crypto_sign_update(
      &state, reinterpret_cast<const unsigned char*>(artifact_file.data()),
      artifact_file.size());
  if (crypto_sign_final_verify(&state, parsed->bytes.data(), key->data()) !=
      0) {
    return Refusal(
        kReasonUntrusted,
        absl::StrCat("the signature of ", artifact_name, " by key ",
                     parsed->key_id,
                     " does not match its bytes: the artifact was changed "
                     "or truncated after signing, or the .sig belongs to "
                     "another artifact; fetch both again from the policy "
                     "store"));
  }
  return parsed->key_id;
}

absl::Status UntrustedError(std::string message) {
  return Refusal(kReasonUntrusted, std::move(message));
}

std::string Sha256Hex(absl::string_view bytes) {
  (void)InitSodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest,
                     reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size());
  return ToHex(digest, sizeof digest);
}

std::string SignatureRefusalReason(const absl::Status& status) {
  if (!absl::IsPermissionDenied(status)) return "";
  auto payload = status.GetPayload(kRefusalPayload);
  return payload ? std::string(*payload) : "";
}

}  // namespace phaseloop::signing
