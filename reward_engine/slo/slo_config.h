#ifndef PHASELOOP_REWARD_ENGINE_SLO_SLO_CONFIG_H_
#define PHASELOOP_REWARD_ENGINE_SLO_SLO_CONFIG_H_

// Service level objectives from OpenSLO v1 YAML (configs/slo/*.yaml): a
// latency threshold SLI at p95, an objective, a rolling window and a
// budgeting method. One file may hold several documents (`---`).
//
// The subset of OpenSLO v1 understood (everything else is an error naming
// the field, so a file never means something other than what it says):
//
//   apiVersion: openslo/v1
//   kind: SLO
//   metadata: {name: checkout-latency, displayName: ...}   # name: RFC 1123
//   spec:
//     description: ...                       # optional, ignored
//     service: checkout
//     indicator:                             # inline SLI only (no
//     indicatorRef)
//       metadata: {name: checkout-p95}
//       spec:
//         thresholdMetric:
//           metricSource:
//             type: phaseloop                # the SLI windows on Kafka
//             spec: {quantile: 0.95}         # optional; only 0.95
//     timeWindow: [{duration: 30d, isRolling: true}]   # exactly one, rolling
//     budgetingMethod: Occurrences           # or Timeslices
//     objectives:                            # exactly one
//       - op: lte                            # only lte
//         value: 250                         # threshold, milliseconds
//         target: 0.99                       # in (0, 1); or targetPercent: 99
//         timeSliceTarget: 0.99              # Timeslices only; default target
//         timeSliceWindow: 1m                # Timeslices only; a multiple of
//                                            # the reward engine's window;
//                                            # default: one engine window
//
// Durations: a positive integer and a unit s, m, h, d or w ("30d").
// Simplifications against OpenSLO v1: the threshold lives in the objective
// (as in v1) and is always milliseconds; calendar windows, ratioMetric,
// alertPolicies and several objectives are rejected rather than ignored.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::slo {

struct Slo {
  std::string name;     // metadata.name
  std::string service;  // spec.service
  // A request is good when it did not fail and took at most threshold_ms.
  double threshold_ms = 0;
  double target = 0;             // e.g. 0.99, in (0, 1)
  int64_t window_ms = 0;         // rolling SLO window, e.g. 30 days
  std::string budgeting_method;  // "Occurrences" | "Timeslices"
  // Timeslices: a timeslice is good when good / total >= time_slice_target
  // (0 means `target`); it lasts time_slice_window_ms, a multiple of the
  // reward engine's window (CheckTimeSlices), slices aligned to multiples
  // of it since the epoch (0: one engine window each).
  double time_slice_target = 0;
  int64_t time_slice_window_ms = 0;
  std::string display_name;  // metadata.displayName, may be empty
  std::string source;        // file it was loaded from ("" if built in code)
};

inline constexpr char kOccurrences[] = "Occurrences";
inline constexpr char kTimeslices[] = "Timeslices";

// Every SLO in one YAML file. InvalidArgument messages name the file, the
// document, the field and the fix; NotFound if the file cannot be read.
absl::StatusOr<std::vector<Slo>> LoadSloFile(const std::string& path);

// Every SLO in `dir`/*.yaml and *.yml (not recursive), files in name order.
// Also rejects the same SLO name twice for one service across files. An
// empty directory is an error (an engine without SLOs is a mistake).
absl::StatusOr<std::vector<Slo>> LoadSloDirectory(const std::string& dir);

// InvalidArgument, naming the SLO's file and the fix, when a Timeslices
// SLO's timeSliceWindow is not a multiple of the reward engine's window
// (`engine_window_ms`): a slice must hold whole engine windows.
absl::Status CheckTimeSlices(const std::vector<Slo>& slos,
                             int64_t engine_window_ms);

// LoadSloDirectory(dir), then CheckTimeSlices against a reward engine's
// window: what a command that runs (or configures) an engine loads.
absl::StatusOr<std::vector<Slo>> LoadSloDirectory(const std::string& dir,
                                                  int64_t engine_window_ms);

// Parses YAML text; `source` names it in error messages.
absl::StatusOr<std::vector<Slo>> ParseSloYaml(const std::string& text,
                                              const std::string& source);

// "30d" → 2592000000. InvalidArgument for anything else.
absl::StatusOr<int64_t> ParseDurationMs(const std::string& text);
// 2592000000 → "30d" (days, hours, minutes or seconds: the largest that
// divides it; "1500ms" otherwise).
std::string FormatDurationMs(int64_t ms);

}  // namespace phaseloop::slo

#endif  // PHASELOOP_REWARD_ENGINE_SLO_SLO_CONFIG_H_
