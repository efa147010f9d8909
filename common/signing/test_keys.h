#ifndef PHASELOOP_COMMON_SIGNING_TEST_KEYS_H_
#define PHASELOOP_COMMON_SIGNING_TEST_KEYS_H_

// Deterministic keys and trust files for tests (test-only).

#include <string>
#include <vector>

#include "common/signing/keys.h"
#include "common/signing/trust_file.h"

namespace phaseloop::signing::testing {

// The key whose seed is 32 bytes of `n`.
SigningKey TestKey(int n);

// A trust file's text listing `keys`.
std::string TrustFileText(const std::vector<SigningKey>& keys);

// Parsed TrustFileText(keys) with source `source`.
TrustedKeys TrustOf(const std::vector<SigningKey>& keys,
                    const std::string& source = "test-trust");

// Writes TrustFileText(keys) to `path`.
void WriteTrustFile(const std::string& path,
                    const std::vector<SigningKey>& keys);

// Writes the secret key file of `key` to `path` (mode 0600).
void WriteKeyFile(const std::string& path, const SigningKey& key);

}  // namespace phaseloop::signing::testing

#endif  // PHASELOOP_COMMON_SIGNING_TEST_KEYS_H_
