#ifndef PHASELOOP_COMMON_SIGNING_KEYS_H_
#define PHASELOOP_COMMON_SIGNING_KEYS_H_

// Ed25519 keys that sign policy artifacts (libsodium), their files and ids.
//
// A key pair lives in two files that `phaseloop policy keygen --out DIR`
// writes:
//   DIR/policy-signing.key   the secret (mode 0600, written atomically):
//       phaseloop-signing-key v1
//       key_id <16 hex>
//       seed <64 hex>              the 32-byte ed25519 seed
//   DIR/policy-signing.pub   a trust file (trust_file.h) naming only it:
//       phaseloop-trust v1
//       <key_id> ed25519 <64 hex public key> [comment]
// `#` starts a comment line. The key id is derived from the public key
// (the first 8 bytes of its BLAKE2b-256 hash), so a trust line cannot name
// one key and hold another. Thread-safe; libsodium is initialised on first
// use.

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::signing {

inline constexpr char kSecretKeyFileName[] = "policy-signing.key";
inline constexpr char kPublicKeyFileName[] = "policy-signing.pub";
inline constexpr char kSecretKeyHeader[] = "phaseloop-signing-key v1";

using PublicKey = std::array<uint8_t, 32>;

// A secret signing key and what is derived from it.
struct SigningKey {
  std::string key_id;              // KeyIdOf(public_key)
  std::array<uint8_t, 32> seed{};  // the secret
  PublicKey public_key{};
  std::array<uint8_t, 64> secret{};  // libsodium's expanded secret key
};

// Internal when libsodium cannot be initialised (no entropy source).
absl::Status InitSodium();

// 16 lowercase hex digits: the first 8 bytes of BLAKE2b-256(public_key).
std::string KeyIdOf(const PublicKey& public_key);

// A fresh random key.
absl::StatusOr<SigningKey> GenerateSigningKey();

// The key whose seed is `seed` (deterministic; tests).
SigningKey SigningKeyFromSeed(const std::array<uint8_t, 32>& seed);

// The secret key file's text, and the public key file's (a trust file
// holding this key alone, with `comment` after it when not empty).
std::string SecretKeyFileText(const SigningKey& key);
std::string PublicKeyFileText(const SigningKey& key, absl::string_view comment);

// Parses a secret key file. `source` (a path) names it in errors, which
// say which line is wrong and what to do (a truncated or damaged file, a
// seed that does not match its key id, another file named by mistake).
absl::StatusOr<SigningKey> ParseSigningKey(absl::string_view text,
                                           absl::string_view source);
// Reads and parses `path`: InvalidArgument naming it when it cannot be read
// or parsed.
absl::StatusOr<SigningKey> ReadSigningKeyFile(const std::string& path);

// Writes DIR/policy-signing.key (0600) and DIR/policy-signing.pub for a new
// key, each atomically, creating DIR when missing. Refuses (AlreadyExists,
// nothing written) when either file exists: a secret key is never
// overwritten. Returns the new key.
absl::StatusOr<SigningKey> WriteNewKeyPair(const std::string& dir,
                                           absl::string_view comment);

// Lowercase hex of `bytes`; strict decoding of exactly `out_size` bytes
// (false on a wrong length or a non-hex digit).
std::string ToHex(const uint8_t* bytes, size_t size);
bool FromHex(absl::string_view hex, uint8_t* out, size_t out_size);

}  // namespace phaseloop::signing

#endif  // PHASELOOP_COMMON_SIGNING_KEYS_H_
