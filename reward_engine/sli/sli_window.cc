#include "reward_engine/sli/sli_window.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

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

int BucketOf(const LatencySketch& sketch, double value) {
  return sketch.mapping().Index(std::clamp(value, kMinValue, kMaxValue));
}

// The failures' sketch, empty when the window has none; `all` is the
// window's checked sketch.
absl::StatusOr<LatencySketch> CheckedErrorSketch(const v1::SliWindow& w,
                                                 const LatencySketch& all) {
  if (!w.has_error_sketch()) return LatencySketch();
  if (w.error_sketch().relative_accuracy() != kDefaultRelativeAccuracy) {
    return absl::InvalidArgumentError(
        absl::StrCat("error_sketch.relative_accuracy: ",
                     w.error_sketch().relative_accuracy(),
                     "; phaseloop merges only sketches of relative accuracy ",
                     kDefaultRelativeAccuracy));
  }
  absl::StatusOr<LatencySketch> failures =
      LatencySketch::FromProto(w.error_sketch());
  if (!failures.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("error_sketch.", failures.status().message()));
  }
  if (failures->count() != w.error_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "error_sketch: holds ", failures->count(),
        " latencies, but error_count is ", w.error_count(),
        "; it is the distribution of the failed requests' latencies"));
  }
  if (failures->empty()) return failures;
  // The failures are some of the requests: above any latency, never more
  // failures than requests. Compared tail by tail, which bucket collapsing
  // (which only moves counts up into the lowest kept bucket) cannot break.
  const int lo =
      std::min(BucketOf(all, all.min()), BucketOf(all, failures->min())) - 1;
  const int hi =
      std::max(BucketOf(all, all.max()), BucketOf(all, failures->max())) + 1;
  int64_t requests_above = 0;
  int64_t failures_above = 0;
  for (int index = hi; index >= lo; --index) {
    requests_above += all.BucketCount(index);
    failures_above += failures->BucketCount(index);
    if (failures_above > requests_above) {
      return absl::InvalidArgumentError(absl::StrCat(
          "error_sketch: ", failures_above, " failures above ",
          all.mapping().LowerBound(index), " s, but sketch holds only ",
          requests_above,
          " requests there; error_sketch must be the failed requests' share "
          "of sketch (their latencies are in both)"));
    }
  }
  return failures;
}

}  // namespace

absl::Status ValidateSliWindow(const v1::SliWindow& window) {
  absl::StatusOr<LatencySketch> all = CheckedSketch(window);
  if (!all.ok()) return all.status();
  return CheckedErrorSketch(window, *all).status();
}

absl::StatusOr<WindowLatencies> WindowSketches(const v1::SliWindow& window) {
  absl::StatusOr<LatencySketch> all = CheckedSketch(window);
  if (!all.ok()) return all.status();
  absl::StatusOr<LatencySketch> failures = CheckedErrorSketch(window, *all);
  if (!failures.ok()) return failures.status();
  return WindowLatencies{*std::move(all), *std::move(failures)};
}

absl::StatusOr<LatencySketch> WindowSketch(const v1::SliWindow& window) {
  absl::StatusOr<WindowLatencies> sketches = WindowSketches(window);
  if (!sketches.ok()) return sketches.status();
  return std::move(sketches->all);
}

void SetWindowSketch(const LatencySketch& sketch, v1::SliWindow* window) {
  window->set_count(sketch.count());
  window->set_sum_seconds(sketch.sum());
  window->set_min_seconds(sketch.min());
  window->set_max_seconds(sketch.max());
  *window->mutable_sketch() = sketch.ToProto();
}

}  // namespace phaseloop::sli
