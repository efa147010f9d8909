#include "reward_engine/sli/sli_window.h"

#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace phaseloop::sli {
namespace {

absl::Status CheckId(absl::string_view field, const std::string& value,
                     bool key_part) {
  if (value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": missing (empty)"));
  }
  if (key_part && value.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": \"", value,
                     "\" contains '/', which separates the parts of the Kafka "
                     "keys service/group/..."));
  }
  return absl::OkStatus();
}

absl::StatusOr<LatencySketch> CheckedSketch(const v1::SliWindow& w) {
  for (auto [field, value, key_part] :
       {std::tuple{"service", &w.service(), true},
        std::tuple{"group", &w.group(), true},
        std::tuple{"instance", &w.instance(), false},
        std::tuple{"deployment_id", &w.deployment_id(), false},
        std::tuple{"policy_version", &w.policy_version(), false}}) {
    absl::Status status = CheckId(field, *value, key_part);
    if (!status.ok()) return status;
  }
  if (w.window_length_ms() <= 0 || w.window_length_ms() > kMaxWindowLengthMs) {
    return absl::InvalidArgumentError(
        absl::StrCat("window_length_ms: ", w.window_length_ms(),
                     " is outside [1, ", kMaxWindowLengthMs, "]"));
  }
  if (w.window_start_ms() > kMaxWindowStartMs) {
    return absl::InvalidArgumentError(
        absl::StrCat("window_start_ms: ", w.window_start_ms(),
                     " is after the year 9999; give Unix milliseconds"));
  }
  if (w.window_start_ms() < 0 ||
      w.window_start_ms() % w.window_length_ms() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("window_start_ms: ", w.window_start_ms(),
                     " is not a non-negative multiple of window_length_ms (",
                     w.window_length_ms(),
                     "); tumbling windows start at multiples of their length"));
  }
  if (w.count() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("count: negative (", w.count(), ")"));
  }
  if (w.error_count() < 0 || w.error_count() > w.count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("error_count: ", w.error_count(), " is outside [0, count ",
                     w.count(), "]"));
  }
  if (w.sketch().relative_accuracy() != kDefaultRelativeAccuracy) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sketch.relative_accuracy: ", w.sketch().relative_accuracy(),
        "; phaseloop merges only sketches of relative accuracy ",
        kDefaultRelativeAccuracy));
  }
  absl::StatusOr<LatencySketch> sketch = LatencySketch::FromProto(w.sketch());
  if (!sketch.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sketch.", sketch.status().message()));
  }
  absl::Status stats = sketch->SetExactStats(
      {w.count(), w.sum_seconds(), w.min_seconds(), w.max_seconds()});
  if (!stats.ok()) return stats;
  return sketch;
}

}  // namespace

absl::Status ValidateSliWindow(const v1::SliWindow& window) {
  return CheckedSketch(window).status();
}

absl::StatusOr<LatencySketch> WindowSketch(const v1::SliWindow& window) {
  return CheckedSketch(window);
}

void SetWindowSketch(const LatencySketch& sketch, v1::SliWindow* window) {
  window->set_count(sketch.count());
  window->set_sum_seconds(sketch.sum());
  window->set_min_seconds(sketch.min());
  window->set_max_seconds(sketch.max());
  *window->mutable_sketch() = sketch.ToProto();
}

}  // namespace phaseloop::sli
