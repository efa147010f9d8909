#include "common/json/strict_json.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"

namespace phaseloop::json_text {
namespace {

struct DuplicateKey {
  std::string key;
};

}  // namespace

absl::StatusOr<nlohmann::json> ParseStrictJson(
    absl::string_view text, std::optional<std::string>* duplicate_key) {
  using Json = nlohmann::json;
  std::vector<std::set<std::string>> keys_of_open_objects;
  const Json::parser_callback_t refuse_duplicates =
      [&](int, Json::parse_event_t event, Json& parsed) {
        if (event == Json::parse_event_t::object_start) {
          keys_of_open_objects.emplace_back();
        } else if (event == Json::parse_event_t::object_end) {
          keys_of_open_objects.pop_back();
        } else if (event == Json::parse_event_t::key &&
                   !keys_of_open_objects.empty() &&
                   !keys_of_open_objects.back()
                        .insert(parsed.get<std::string>())
                        .second) {
          throw DuplicateKey{parsed.get<std::string>()};
        }
        return true;
      };
  try {
    return Json::parse(text.begin(), text.end(), refuse_duplicates);
  } catch (const DuplicateKey& duplicate) {
    if (duplicate_key != nullptr) *duplicate_key = duplicate.key;
    return absl::InvalidArgumentError(absl::StrCat(
        "'", duplicate.key, "': given twice; give each field once"));
  } catch (const Json::exception& e) {  // parse_error; out_of_range (1e400)
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    return absl::InvalidArgumentError(absl::StrCat("not JSON: ", what));
  }
}

}  // namespace phaseloop::json_text
