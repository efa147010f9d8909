#include "common/signing/keys.h"

#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/files/atomic_file.h"

namespace phaseloop::signing {
namespace {

constexpr char kRegenerate[] =
    "; generate a new key with `phaseloop policy keygen --out DIR` (and trust "
    "its .pub) or restore the file from your secret store";

}  // namespace

absl::Status InitSodium() {
  // sodium_init is thread-safe and returns 1 once already initialised.
  if (sodium_init() < 0) {
    return absl::InternalError(
        "libsodium could not be initialised (no entropy source?)");
  }
  return absl::OkStatus();
}

std::string ToHex(const uint8_t* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
  }
  return out;
}

bool FromHex(absl::string_view hex, uint8_t* out, size_t out_size) {
  if (hex.size() != out_size * 2) return false;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < out_size; ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string KeyIdOf(const PublicKey& public_key) {
  (void)InitSodium();
  uint8_t hash[crypto_generichash_BYTES];
  crypto_generichash(hash, sizeof hash, public_key.data(), public_key.size(),
                     nullptr, 0);
  return ToHex(hash, 8);
}

SigningKey SigningKeyFromSeed(const std::array<uint8_t, 32>& seed) {
  (void)InitSodium();
  SigningKey key;
  key.seed = seed;
  crypto_sign_seed_keypair(key.public_key.data(), key.secret.data(),
                           seed.data());
  key.key_id = KeyIdOf(key.public_key);
  return key;
}

absl::StatusOr<SigningKey> GenerateSigningKey() {
  if (absl::Status s = InitSodium(); !s.ok()) return s;
  std::array<uint8_t, 32> seed;
  randombytes_buf(seed.data(), seed.size());
  SigningKey key = SigningKeyFromSeed(seed);
  sodium_memzero(seed.data(), seed.size());
  return key;
}

std::string SecretKeyFileText(const SigningKey& key) {
  return absl::StrCat(
      "# phaseloop policy signing key ", key.key_id,
      ": SECRET, keep it mode 0600 and out of version control\n",
      kSecretKeyHeader, "\n", "key_id ", key.key_id, "\n", "seed ",
      ToHex(key.seed.data(), key.seed.size()), "\n");
}

std::string PublicKeyFileText(const SigningKey& key,
                              absl::string_view comment) {
  return absl::StrCat(
      "# phaseloop policy signing key ", key.key_id,
      " (public). Trust it by adding its key line to your trust file.\n",
      "phaseloop-trust v1\n", key.key_id, " ed25519 ",
      ToHex(key.public_key.data(), key.public_key.size()),
      comment.empty() ? "" : " ", comment, "\n");
}

absl::StatusOr<SigningKey> ParseSigningKey(absl::string_view text,
                                           absl::string_view source) {
  auto error = [&](int line, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "signing key file '", source, "'",
        line > 0 ? absl::StrCat(" line ", line) : "", ": ", what, kRegenerate));
  };
  std::vector<std::pair<int, std::string>> lines;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    std::string trimmed(absl::StripAsciiWhitespace(line));
    if (trimmed.empty() || trimmed[0] == '#') continue;
    lines.emplace_back(number, std::move(trimmed));
  }
  if (lines.empty()) return error(0, "the file is empty");
  if (lines[0].second != kSecretKeyHeader) {
    if (absl::StartsWith(lines[0].second, "phaseloop-trust")) {
      return error(lines[0].first,
                   "this is a public key (trust) file, not the secret key "
                   "(policy-signing.key)");
    }
    return error(lines[0].first,
                 absl::StrCat("expected '", kSecretKeyHeader, "', got '",
                              lines[0].second.substr(0, 40), "'"));
  }
  std::string key_id, seed_hex;
  int seed_line = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto& [line, content] = lines[i];
    std::vector<std::string> fields =
        absl::StrSplit(content, ' ', absl::SkipEmpty());
    if (fields.size() != 2 || (fields[0] != "key_id" && fields[0] != "seed")) {
      return error(line, "expected 'key_id <16 hex>' or 'seed <64 hex>'");
    }
    std::string& slot = fields[0] == "key_id" ? key_id : seed_hex;
    if (!slot.empty()) return error(line, absl::StrCat(fields[0], " twice"));
    slot = fields[1];
    if (fields[0] == "seed") seed_line = line;
  }
  if (key_id.empty()) return error(0, "no key_id line (truncated?)");
  if (seed_hex.empty()) return error(0, "no seed line (truncated?)");
  std::array<uint8_t, 32> seed;
  if (!FromHex(seed_hex, seed.data(), seed.size())) {
    return error(seed_line,
                 absl::StrCat("seed must be 64 lowercase hex digits, got ",
                              seed_hex.size(),
                              " characters (truncated or "
                              "damaged)"));
  }
  SigningKey key = SigningKeyFromSeed(seed);
  sodium_memzero(seed.data(), seed.size());
  if (key.key_id != key_id) {
    return error(0,
                 absl::StrCat("the seed belongs to key ", key.key_id,
                              ", not to key_id ", key_id, " (damaged file)"));
  }
  return key;
}

absl::StatusOr<SigningKey> ReadSigningKeyFile(const std::string& path) {
  std::string text;
  absl::Status read = files::ReadWholeFile(path, &text);
  if (!read.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the signing key file '", path, "': ", read.message()));
  }
  absl::StatusOr<SigningKey> key = ParseSigningKey(text, path);
  sodium_memzero(text.data(), text.size());
  return key;
}

absl::StatusOr<SigningKey> WriteNewKeyPair(const std::string& dir,
                                           absl::string_view comment) {
  const std::string secret_path = absl::StrCat(dir, "/", kSecretKeyFileName);
  const std::string public_path = absl::StrCat(dir, "/", kPublicKeyFileName);
  for (const std::string& path : {secret_path, public_path}) {
    struct stat info;
    if (lstat(path.c_str(), &info) == 0) {
      return absl::AlreadyExistsError(absl::StrCat(
          "'", path,
          "' exists; a signing key is never overwritten: choose another "
          "--out directory (rotation: trust the new key beside the old)"));
    }
  }
  if (absl::Status made = files::MakeDirectories(dir); !made.ok()) return made;
  absl::StatusOr<SigningKey> key = GenerateSigningKey();
  if (!key.ok()) return key.status();
  std::string secret_text = SecretKeyFileText(*key);
  absl::Status written =
      files::WriteFileAtomically(secret_path, secret_text, 0600);
  sodium_memzero(secret_text.data(), secret_text.size());
  if (!written.ok()) return written;
  written =
      files::WriteFileAtomically(public_path, PublicKeyFileText(*key, comment));
  if (!written.ok()) {
    unlink(secret_path.c_str());
    return written;
  }
  return key;
}

}  // namespace phaseloop::signing
