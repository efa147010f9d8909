#ifndef PHASELOOP_COMMON_SIGNING_TRUST_FILE_H_
#define PHASELOOP_COMMON_SIGNING_TRUST_FILE_H_

// The trust file: which public keys may sign the policy artifacts a
// component accepts (the policy store, `phaseloop policy pull`, the
// wrapper and the Bazel toolchain). A text file:
//
//   # comments and blank lines anywhere
//   phaseloop-trust v1                       the first non-comment line
//   <key_id> ed25519 <64 hex public key> [comment ...]
//   ...                                      one line per trusted key
//
// Key lines are what `phaseloop policy keygen` writes into policy-signing
// .pub. Several keys may be trusted at once (rotation: add the new key's
// line, sign with the new key, then delete the old key's line). Every
// defect is an error naming the file and line and what to do: a missing or
// other header, a key id that is not the id of its public key, a public key
// of the wrong length, an algorithm other than ed25519, a key listed twice,
// and a file that lists no key (it would refuse everything). Immutable once
// parsed; thread-safe.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/signing/keys.h"

namespace phaseloop::signing {

inline constexpr char kTrustFileHeader[] = "phaseloop-trust v1";

class TrustedKeys {
 public:
  // `source` (a path) names the file in errors and in source().
  static absl::StatusOr<TrustedKeys> Parse(absl::string_view text,
                                           absl::string_view source);
  // Reads and parses `path` (InvalidArgument naming it when unreadable).
  static absl::StatusOr<TrustedKeys> Read(const std::string& path);

  // The key with id `key_id`, or nullptr when it is not trusted.
  const PublicKey* Find(absl::string_view key_id) const;
  // Every trusted key id, sorted.
  std::string KeyIdList() const;
  size_t size() const { return keys_.size(); }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::map<std::string, PublicKey, std::less<>> keys_;
};

}  // namespace phaseloop::signing

#endif  // PHASELOOP_COMMON_SIGNING_TRUST_FILE_H_
