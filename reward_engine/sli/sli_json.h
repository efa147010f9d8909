#ifndef PHASELOOP_REWARD_ENGINE_SLI_SLI_JSON_H_
#define PHASELOOP_REWARD_ENGINE_SLI_SLI_JSON_H_

// SLI windows as JSON lines, the input of `phaseloop sli send` (a bridge
// from a user's own monitoring). One window per line, in either form:
//
//   raw latencies (the sketch is built here, at relative accuracy 0.005):
//     {"service": "checkout", "group": "canary", "instance": "pod-1",
//      "deployment_id": "dep-7", "policy_version": "pv-3",
//      "window_start_ms": 1700000000000, "window_length_ms": 10000,
//      "latencies_ms": [12.5, 13.1, 250], "errors": 1}
//     or, better, with the failed requests' latencies (each also in
//     latencies_ms), so a slow failure counts once against the SLO:
//      "latencies_ms": [12.5, 13.1, 250], "error_latencies_ms": [250]
//   a pre-built sketch: the proto3 JSON of v1::SliWindow with its field
//     names (what SliWindowToJson prints, so --dry-run output is valid
//     input): the ids and window as above, "count", "sum_seconds",
//     "min_seconds", "max_seconds", "error_count" and "sketch":
//     {"relative_accuracy": 0.005, "zero_count": 0, "index_offset": -400,
//      "counts": [3, 0, 1]} (or "sparse_indexes" + "sparse_counts"), and
//     optionally "error_sketch", the failures' share of it.
//
// Integers may be JSON numbers or decimal strings (proto3 JSON prints int64
// as strings). Unknown fields are errors (a typo must not drop data). Every
// window is validated (sli_window.h).

#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "phaseloop/v1/sli.pb.h"

namespace phaseloop::sli {

// One line to a validated window. InvalidArgument whose message starts with
// the offending field ("latencies_ms[3]: ...", "sketch.counts[0]: ...").
absl::StatusOr<v1::SliWindow> ParseSliWindowJson(absl::string_view line);

struct SliJsonLines {
  std::vector<v1::SliWindow> windows;  // of the valid lines, in order
  // "line N: field: what is wrong", at most `max_errors` of them.
  std::vector<std::string> errors;
  int error_lines = 0;  // all bad lines, including those not listed
};

// Reads every line of `in` (blank lines are skipped; lines count from 1).
SliJsonLines ParseSliJsonLines(std::istream& in, int max_errors = 20);

// One line of proto3 JSON with the proto's field names and every field.
std::string SliWindowToJson(const v1::SliWindow& window);

}  // namespace phaseloop::sli

#endif  // PHASELOOP_REWARD_ENGINE_SLI_SLI_JSON_H_
