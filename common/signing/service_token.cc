#include "common/signing/service_token.h"

#include <sodium.h>

#include "absl/strings/str_cat.h"
#include "common/files/atomic_file.h"
#include "common/signing/keys.h"

namespace phaseloop::signing {

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::string text;
  absl::Status read = files::ReadWholeFile(path, &text);
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token file '", path, "': ", what, "; write one line of at least ",
        kMinTokenBytes,
        " characters, e.g. `head -c 32 /dev/urandom | base64 > FILE`"));
  };
  if (!read.ok()) return error(read.message());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  if (text.empty()) return error("the file is empty");
  for (char c : text) {
    if (c <= ' ' || c == 127) {
      return error(
          "the token holds spaces, control characters or more "
          "than one line");
    }
  }
  if (text.size() < kMinTokenBytes) {
    return error(absl::StrCat("the token has ", text.size(),
                              " characters, too short to guess-proof"));
  }
  return text;
}

bool TokensEqual(absl::string_view a, absl::string_view b) {
  (void)InitSodium();
  if (a.size() != b.size()) return false;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace phaseloop::signing
