#include "reward_engine/engine/sli_input.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/kafka/topics.h"
#include "reward_engine/sli/sli_window.h"

namespace phaseloop::reward_engine {

SloThresholds ThresholdsOf(const std::vector<slo::Slo>& slos) {
  SloThresholds thresholds;
  for (const slo::Slo& s : slos) {
    const double seconds = s.threshold_ms / 1000.0;
    auto [it, first] = thresholds.try_emplace(s.service, seconds);
    if (!first) it->second = std::min(it->second, seconds);
  }
  return thresholds;
}

absl::StatusOr<SliInput> DecodeSliRecord(const kafka::ConsumedMessage& message,
                                         int64_t window_ms,
                                         const SloThresholds& slos) {
  v1::SliWindow window;
  if (!window.ParseFromString(message.value)) {
    return absl::FailedPreconditionError(
        "malformed: not a serialized phaseloop.v1.SliWindow");
  }
  absl::StatusOr<sli::WindowLatencies> sketches = sli::WindowSketches(window);
  if (!sketches.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("invalid: ", sketches.status().message()));
  }
  const std::string key = kafka::SliKey(window.service());
  if (message.key != key) {
    return absl::FailedPreconditionError(
        absl::StrCat("key_mismatch: key \"", message.key,
                     "\" but the window "
                     "is for service \"",
                     key,
                     "\" (produce SLI windows keyed "
                     "by service, so one engine sees all its groups)"));
  }
  if (window_ms % window.window_length_ms() != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "misaligned: window_length_ms ", window.window_length_ms(),
        " does not divide the engine's window of ", window_ms, " ms"));
  }
  // Event time runs ahead of the record's own time only by clock skew: a
  // window dated later (a wrong clock, a bad field) would close every
  // earlier window as late, now and after any restart.
  if (message.timestamp_ms >= 0 &&
      window.window_start_ms() > message.timestamp_ms + kMaxFutureSkewMs) {
    return absl::FailedPreconditionError(absl::StrCat(
        "future: the window starts at ", window.window_start_ms(), ", ",
        window.window_start_ms() - message.timestamp_ms,
        " ms after the record was produced (", message.timestamp_ms,
        "); fix the producer's clock or the window's window_start_ms"));
  }
  if (slos.find(window.service()) == slos.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("unknown_service: no SLO for service \"", window.service(),
                     "\" (add one to the --slo-dir)"));
  }
  SliInput input;
  input.partition = message.partition;
  input.offset = message.offset;
  input.service = window.service();
  input.group = window.group();
  input.instance = window.instance();
  input.deployment_id = window.deployment_id();
  input.policy_version = window.policy_version();
  input.sli_window_start_ms = window.window_start_ms();
  input.sli_window_length_ms = window.window_length_ms();
  input.count = window.count();
  input.error_count = window.error_count();
  input.sketch = std::move(sketches->all);
  input.error_sketch = std::move(sketches->failures);
  return input;
}

}  // namespace phaseloop::reward_engine
