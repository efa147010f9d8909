#include "compiler_driver/cc_wrapper/cache_fields.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::cc_wrapper {

void AppendField(std::string* text, absl::string_view name,
                 absl::string_view value) {
  absl::StrAppend(text, name, " ", value.size(), ":", value, "\n");
}

absl::StatusOr<std::string> ReadField(const std::string& bytes, size_t* pos,
                                      absl::string_view name) {
  const std::string prefix = absl::StrCat(name, " ");
  if (*pos > bytes.size() || bytes.compare(*pos, prefix.size(), prefix) != 0) {
    return absl::DataLossError(absl::StrCat("expected field '", name, "'"));
  }
  *pos += prefix.size();
  const size_t colon = bytes.find(':', *pos);
  size_t length = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(bytes.substr(*pos, colon - *pos), &length) ||
      length > bytes.size() || colon + 1 + length + 1 > bytes.size() ||
      bytes[colon + 1 + length] != '\n') {
    return absl::DataLossError(absl::StrCat("field '", name, "' is cut"));
  }
  std::string value = bytes.substr(colon + 1, length);
  *pos = colon + 1 + length + 1;
  return value;
}

absl::StatusOr<int64_t> ReadNumberField(const std::string& bytes, size_t* pos,
                                        absl::string_view name) {
  absl::StatusOr<std::string> text = ReadField(bytes, pos, name);
  if (!text.ok()) return text.status();
  int64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value)) {
    return absl::DataLossError(absl::StrCat("field '", name, "' is no number"));
  }
  return value;
}

bool IsCacheKey(absl::string_view s) {
  return s.size() == 32 &&
         s.find_first_not_of("0123456789abcdef") == absl::string_view::npos;
}

}  // namespace phaseloop::cc_wrapper
