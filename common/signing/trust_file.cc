#include "common/signing/trust_file.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/files/atomic_file.h"

namespace phaseloop::signing {

absl::StatusOr<TrustedKeys> TrustedKeys::Parse(absl::string_view text,
                                               absl::string_view source) {
  auto error = [&](int line, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trust file '", source, "'",
        line > 0 ? absl::StrCat(" line ", line) : "", ": ", what,
        "; each key line is '<key_id> ed25519 <public key hex> [comment]' as "
        "`phaseloop policy keygen` writes it into policy-signing.pub"));
  };
  TrustedKeys trusted;
  trusted.source_ = std::string(source);
  bool header_seen = false;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {
      if (line != kTrustFileHeader) {
        if (absl::StartsWith(line, kSecretKeyHeader)) {
          return error(number,
                       "this is a SECRET signing key, not a trust file; "
                       "name the key's policy-signing.pub (and keep the "
                       "secret key out of reach)");
        }
        return error(number,
                     absl::StrCat("the first line must be '", kTrustFileHeader,
                                  "', got '", line.substr(0, 40), "'"));
      }
      header_seen = true;
      continue;
    }
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() < 3) {
      return error(number, absl::StrCat("expected at least 3 fields, got ",
                                        fields.size()));
    }
    if (fields[1] != "ed25519") {
      return error(number, absl::StrCat("unknown algorithm '", fields[1],
                                        "' (only ed25519 is supported)"));
    }
    PublicKey key;
    if (!FromHex(fields[2], key.data(), key.size())) {
      return error(
          number,
          absl::StrCat("the public key must be 64 lowercase hex "
                       "digits, got ",
                       fields[2].size(), " characters (truncated or damaged)"));
    }
    const std::string id = KeyIdOf(key);
    if (fields[0] != id) {
      return error(
          number, absl::StrCat("key id '", fields[0],
                               "' is not the id of its public key (", id, ")"));
    }
    if (!trusted.keys_.emplace(id, key).second) {
      return error(number, absl::StrCat("key ", id, " is listed twice"));
    }
  }
  if (!header_seen) {
    return error(0, absl::StrCat("the file is empty; it must start with '",
                                 kTrustFileHeader, "'"));
  }
  if (trusted.keys_.empty()) {
    return error(0,
                 "the file lists no key, so it would refuse every policy; "
                 "add a key line or stop naming this trust file");
  }
  return trusted;
}

absl::StatusOr<TrustedKeys> TrustedKeys::Read(const std::string& path) {
  std::string text;
  absl::Status read = files::ReadWholeFile(path, &text);
  if (!read.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the trust file '", path, "': ", read.message()));
  }
  return Parse(text, path);
}

const PublicKey* TrustedKeys::Find(absl::string_view key_id) const {
  auto it = keys_.find(key_id);
  return it == keys_.end() ? nullptr : &it->second;
}

std::string TrustedKeys::KeyIdList() const {
  std::vector<std::string> ids;
  for (const auto& [id, key] : keys_) ids.push_back(id);
  return absl::StrJoin(ids, ", ");
}

}  // namespace phaseloop::signing
