#ifndef PHASELOOP_COMMON_JSON_STRICT_JSON_H_
#define PHASELOOP_COMMON_JSON_STRICT_JSON_H_

// JSON as phaseloop reads what others send it (SLI windows, the canary
// judge's requests): a key given twice in one object is refused. JSON
// parsers keep one of the two (nlohmann's the last) without a word, so a
// latency list or a metric was lost; the YAML configs refuse it too.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace phaseloop::json_text {

// The parsed value; InvalidArgument "not JSON: <parser's reason>", or, for
// a key given twice, "'<key>': given twice; give each field once" with
// `*duplicate_key` set to the key (when given; an empty key is a key).
absl::StatusOr<nlohmann::json> ParseStrictJson(
    absl::string_view text,
    std::optional<std::string>* duplicate_key = nullptr);

}  // namespace phaseloop::json_text

#endif  // PHASELOOP_COMMON_JSON_STRICT_JSON_H_
