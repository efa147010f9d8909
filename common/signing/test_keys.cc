#include "common/signing/test_keys.h"

#include <cstdlib>
#include <iostream>

#include "common/files/atomic_file.h"

namespace phaseloop::signing::testing {

SigningKey TestKey(int n) {
  std::array<uint8_t, 32> seed;
  seed.fill(static_cast<uint8_t>(n));
  return SigningKeyFromSeed(seed);
}

std::string TrustFileText(const std::vector<SigningKey>& keys) {
  std::string text = "# test trust file\nphaseloop-trust v1\n";
  for (const SigningKey& key : keys) {
    text += key.key_id + " ed25519 " +
            ToHex(key.public_key.data(), key.public_key.size()) + " test\n";
  }
  return text;
}

TrustedKeys TrustOf(const std::vector<SigningKey>& keys,
                    const std::string& source) {
  absl::StatusOr<TrustedKeys> trust =
      TrustedKeys::Parse(TrustFileText(keys), source);
  if (!trust.ok()) {
    std::cerr << "TrustOf: " << trust.status() << "\n";
    std::abort();
  }
  return *std::move(trust);
}

void WriteTrustFile(const std::string& path,
                    const std::vector<SigningKey>& keys) {
  if (!files::WriteFileAtomically(path, TrustFileText(keys)).ok()) {
    std::abort();
  }
}

void WriteKeyFile(const std::string& path, const SigningKey& key) {
  if (!files::WriteFileAtomically(path, SecretKeyFileText(key), 0600).ok()) {
    std::abort();
  }
}

}  // namespace phaseloop::signing::testing
