#include "reward_engine/sli/sli_json.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json/strict_json.h"
#include "nlohmann/json.hpp"
#include "reward_engine/sli/latency_sketch.h"
#include "reward_engine/sli/sli_window.h"

namespace phaseloop::sli {
namespace {

using nlohmann::json;

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

// An int64 from a JSON integer or a decimal string (proto3 JSON).
absl::StatusOr<int64_t> ToInt64(const json& value, absl::string_view field) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > uint64_t{INT64_MAX}) {
      return FieldError(field, "integer out of range");
    }
    return value.get<int64_t>();
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    int64_t parsed = 0;
    const auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error == std::errc() && end == text.data() + text.size() &&
        !text.empty()) {
      return parsed;
    }
  }
  return FieldError(
      field,
      absl::StrCat("expected an integer, got ",
                   value.dump(-1, ' ', false,
                              nlohmann::json::error_handler_t::replace)));
}

absl::StatusOr<double> ToDouble(const json& value, absl::string_view field) {
  if (value.is_number()) return value.get<double>();
  return FieldError(
      field,
      absl::StrCat("expected a number, got ",
                   value.dump(-1, ' ', false,
                              nlohmann::json::error_handler_t::replace)));
}

// Reads the fields of one JSON object, remembering which were seen.
class Fields {
 public:
  Fields(const json& object, std::string prefix)
      : object_(object), prefix_(std::move(prefix)) {}

  std::string Path(absl::string_view name) const {
    return absl::StrCat(prefix_, name);
  }
  const json* Find(const char* name) {
    seen_.insert(name);
    auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  absl::Status String(const char* name, std::string* out) {
    const json* value = Find(name);
    if (value == nullptr) return FieldError(Path(name), "missing");
    if (!value->is_string()) {
      return FieldError(Path(name),
                        absl::StrCat("expected a string, got ", value->dump()));
    }
    *out = value->get<std::string>();
    return absl::OkStatus();
  }
  template <typename Setter>
  absl::Status Int64(const char* name, bool required, Setter set) {
    const json* value = Find(name);
    if (value == nullptr) {
      return required ? FieldError(Path(name), "missing") : absl::OkStatus();
    }
    absl::StatusOr<int64_t> parsed = ToInt64(*value, Path(name));
    if (!parsed.ok()) return parsed.status();
    set(*parsed);
    return absl::OkStatus();
  }
  template <typename Setter>
  absl::Status Double(const char* name, Setter set) {
    const json* value = Find(name);
    if (value == nullptr) return absl::OkStatus();  // proto3 default 0
    absl::StatusOr<double> parsed = ToDouble(*value, Path(name));
    if (!parsed.ok()) return parsed.status();
    set(*parsed);
    return absl::OkStatus();
  }
  // Each element of an optional array.
  template <typename Each>
  absl::Status Array(const char* name, Each each) {
    const json* value = Find(name);
    if (value == nullptr) return absl::OkStatus();
    if (!value->is_array()) {
      return FieldError(Path(name), "expected an array");
    }
    for (size_t k = 0; k < value->size(); ++k) {
      absl::Status status =
          each((*value)[k], absl::StrCat(Path(name), "[", k, "]"));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  // Error for the first field not read.
  absl::Status NoOthers() const {
    for (const auto& [name, value] : object_.items()) {
      if (seen_.count(name) == 0) {
        return FieldError(Path(name), "unknown field");
      }
    }
    return absl::OkStatus();
  }

 private:
  const json& object_;
  std::string prefix_;
  std::set<std::string> seen_;
};

absl::Status ParseSketch(const char* name, const json& object,
                         v1::LatencySketch* sketch) {
  if (!object.is_object()) {
    return FieldError(name, "expected an object");
  }
  Fields f(object, absl::StrCat(name, "."));
  absl::Status status = f.Double(
      "relative_accuracy", [&](double v) { sketch->set_relative_accuracy(v); });
  if (status.ok()) {
    status = f.Int64("zero_count", false,
                     [&](int64_t v) { sketch->set_zero_count(v); });
  }
  if (status.ok()) {
    status = f.Int64("index_offset", false, [&](int64_t v) {
      sketch->set_index_offset(static_cast<int32_t>(
          std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)));  // then rejected
    });
  }
  auto int64s = [&](auto add) {
    return [add](const json& v, const std::string& path) -> absl::Status {
      absl::StatusOr<int64_t> parsed = ToInt64(v, path);
      if (!parsed.ok()) return parsed.status();
      add(*parsed);
      return absl::OkStatus();
    };
  };
  if (status.ok()) {
    status =
        f.Array("counts", int64s([&](int64_t v) { sketch->add_counts(v); }));
  }
  if (status.ok()) {
    status = f.Array("sparse_indexes", int64s([&](int64_t v) {
                       sketch->add_sparse_indexes(static_cast<int32_t>(
                           std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)));
                     }));
  }
  if (status.ok()) {
    status = f.Array("sparse_counts",
                     int64s([&](int64_t v) { sketch->add_sparse_counts(v); }));
  }
  return status.ok() ? f.NoOthers() : status;
}

// proto3's canonical JSON names fields in lowerCamelCase (windowStartMs):
// what a protobuf JSON printer writes was refused as "missing" fields. Keys
// of `object` and its objects are read in snake_case; a field given both
// ways is an error naming both.
absl::Status SnakeCaseKeys(json& object, const std::string& path) {
  if (!object.is_object()) return absl::OkStatus();
  json renamed = json::object();
  std::map<std::string, std::string> spelled;  // snake -> as given
  for (auto& [key, value] : object.items()) {
    std::string snake;
    for (char c : key) {
      if (c >= 'A' && c <= 'Z') {
        snake += '_';
        snake += static_cast<char>(c - 'A' + 'a');
      } else {
        snake += c;
      }
    }
    if (auto [it, added] = spelled.emplace(snake, key); !added) {
      return FieldError(path + snake,
                        absl::StrCat("given twice (as ", it->second, " and ",
                                     key, "); give each field once"));
    }
    if (absl::Status inner = SnakeCaseKeys(value, path + snake + ".");
        !inner.ok()) {
      return inner;
    }
    renamed[snake] = std::move(value);
  }
  object = std::move(renamed);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::SliWindow> ParseSliWindowJson(absl::string_view line) {
  // A key given twice in one object (common/json/strict_json.h): JSON
  // parsers keep one of them without a word, and a latency list was lost.
  std::optional<std::string> duplicate;
  absl::StatusOr<json> parsed = json_text::ParseStrictJson(line, &duplicate);
  if (!parsed.ok()) {
    if (duplicate) {
      return FieldError(*duplicate, "given twice; give each field once");
    }
    return parsed.status();
  }
  json object = *std::move(parsed);
  if (!object.is_object()) {
    return absl::InvalidArgumentError(
        "not a JSON object (one SLI window per line)");
  }
  if (absl::Status names = SnakeCaseKeys(object, ""); !names.ok()) {
    return names;
  }
  // Every missing required field at once (a newcomer should not need one
  // round per field to learn the schema).
  std::vector<std::string> missing;
  for (const char* name :
       {"service", "group", "instance", "deployment_id", "policy_version",
        "window_start_ms", "window_length_ms"}) {
    if (!object.contains(name)) missing.push_back(name);
  }
  if (!object.contains("latencies_ms") && !object.contains("sketch")) {
    missing.push_back("latencies_ms");
  }
  if (missing.size() > 1) {
    return FieldError(
        missing[0],
        absl::StrCat("missing; so are ",
                     absl::StrJoin(missing.begin() + 1, missing.end(), ", "),
                     " (every window needs service, group, instance, "
                     "deployment_id, policy_version, window_start_ms, "
                     "window_length_ms and latencies_ms or a sketch; "
                     "example: configs/sli/example.jsonl)"));
  }
  v1::SliWindow w;
  Fields f(object, "");
  for (auto [name, field] :
       {std::pair{"service", w.mutable_service()},
        std::pair{"group", w.mutable_group()},
        std::pair{"instance", w.mutable_instance()},
        std::pair{"deployment_id", w.mutable_deployment_id()},
        std::pair{"policy_version", w.mutable_policy_version()}}) {
    absl::Status status = f.String(name, field);
    if (!status.ok()) return status;
  }
  absl::Status status = f.Int64("window_start_ms", true,
                                [&](int64_t v) { w.set_window_start_ms(v); });
  if (status.ok()) {
    status = f.Int64("window_length_ms", true,
                     [&](int64_t v) { w.set_window_length_ms(v); });
  }
  if (!status.ok()) return status;

  const bool raw = object.contains("latencies_ms");
  if (raw && object["latencies_ms"].is_null()) {
    return FieldError("latencies_ms",
                      "null; give the window's latencies as a list ([] for "
                      "a window without requests)");
  }
  if (raw) {
    if (object.contains("sketch")) {
      return FieldError("sketch",
                        "give either latencies_ms or a sketch, not both");
    }
    if (object.contains("error_sketch")) {
      return FieldError("error_sketch",
                        "goes with a sketch; with latencies_ms give the "
                        "failures' latencies as error_latencies_ms");
    }
    const bool failure_latencies = f.Find("error_latencies_ms") != nullptr;
    // The values are kept only to check the failures against the requests.
    auto latencies_into = [&f, failure_latencies](const char* name,
                                                  LatencySketch& sketch,
                                                  std::vector<double>& values) {
      return f.Array(name, [&](const json& v, const std::string& path) {
        absl::StatusOr<double> ms = ToDouble(v, path);
        if (!ms.ok()) return ms.status();
        if (!(*ms >= 0 && *ms <= kMaxValue * 1000)) {
          return FieldError(
              path, absl::StrCat("latency ", *ms, " ms is not in [0, 1e12]"));
        }
        if (failure_latencies) values.push_back(*ms);
        absl::Status added = sketch.Add(*ms / 1000);
        return added.ok() ? added : FieldError(path, added.message());
      });
    };
    LatencySketch sketch;
    LatencySketch failures;
    std::vector<double> all_ms;
    std::vector<double> failed_ms;
    status = latencies_into("latencies_ms", sketch, all_ms);
    if (status.ok()) {
      status = latencies_into("error_latencies_ms", failures, failed_ms);
    }
    if (status.ok() && !failed_ms.empty()) {
      // Each failure is one of the requests: its latency is listed in
      // latencies_ms too (as many times as it failed at most).
      std::multiset<double> listed(all_ms.begin(), all_ms.end());
      for (size_t k = 0; k < failed_ms.size(); ++k) {
        auto it = listed.find(failed_ms[k]);
        if (it == listed.end()) {
          return FieldError(
              absl::StrCat("error_latencies_ms[", k, "]"),
              absl::StrCat(failed_ms[k],
                           " ms is not (or not that often) in latencies_ms; "
                           "list every request there, failures included"));
        }
        listed.erase(it);
      }
    }
    std::optional<int64_t> errors;
    if (status.ok()) {
      status = f.Int64("errors", false, [&](int64_t v) { errors = v; });
    }
    if (!status.ok()) return status;
    SetWindowSketch(sketch, &w);
    if (failure_latencies && errors && *errors != failures.count()) {
      return FieldError(
          "errors",
          absl::StrCat(*errors, " but error_latencies_ms lists ",
                       failures.count(),
                       " latencies; give one of them, or both agreeing"));
    }
    w.set_error_count(failure_latencies ? failures.count()
                                        : errors.value_or(0));
    if (w.error_count() < 0 || w.error_count() > w.count()) {
      return FieldError(
          "errors", absl::StrCat(w.error_count(), " is outside [0, ", w.count(),
                                 "] (the number of latencies)"));
    }
    if (failure_latencies) {
      *w.mutable_error_sketch() = failures.ToProto();
    }
  } else {
    const json* sketch = f.Find("sketch");
    if (sketch == nullptr) {
      return FieldError("latencies_ms",
                        "missing (give latencies_ms, or a sketch with count, "
                        "sum_seconds, min_seconds and max_seconds)");
    }
    status = ParseSketch("sketch", *sketch, w.mutable_sketch());
    if (const json* failures = f.Find("error_sketch");
        status.ok() && failures != nullptr) {
      status = ParseSketch("error_sketch", *failures, w.mutable_error_sketch());
    }
    if (status.ok() && object.contains("error_latencies_ms")) {
      status = FieldError("error_latencies_ms",
                          "goes with latencies_ms; with a sketch give the "
                          "failures' latencies as error_sketch");
    }
    if (status.ok()) {
      status = f.Int64("count", true, [&](int64_t v) { w.set_count(v); });
    }
    if (status.ok()) {
      status = f.Int64("error_count", false,
                       [&](int64_t v) { w.set_error_count(v); });
    }
    for (auto [name, setter] :
         {std::pair{"sum_seconds", &v1::SliWindow::set_sum_seconds},
          std::pair{"min_seconds", &v1::SliWindow::set_min_seconds},
          std::pair{"max_seconds", &v1::SliWindow::set_max_seconds}}) {
      if (status.ok()) {
        status = f.Double(name, [&, s = setter](double v) { (w.*s)(v); });
      }
    }
    if (!status.ok()) return status;
  }
  status = f.NoOthers();
  if (status.ok()) status = ValidateSliWindow(w);
  if (!status.ok()) return status;
  return w;
}

SliJsonLines ParseSliJsonLines(std::istream& in, int max_errors) {
  SliJsonLines result;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    absl::StatusOr<v1::SliWindow> window = ParseSliWindowJson(line);
    if (window.ok()) {
      result.windows.push_back(*std::move(window));
      continue;
    }
    ++result.error_lines;
    if (static_cast<int>(result.errors.size()) < max_errors) {
      result.errors.push_back(
          absl::StrCat("line ", number, ": ", window.status().message()));
    }
  }
  return result;
}

std::string SliWindowToJson(const v1::SliWindow& window) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(window, &out, options)
           .ok()) {
    return "{}";  // unreachable: printing a message cannot fail
  }
  return out;
}

}  // namespace phaseloop::sli
