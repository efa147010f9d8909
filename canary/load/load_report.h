#ifndef PHASELOOP_CANARY_LOAD_LOAD_REPORT_H_
#define PHASELOOP_CANARY_LOAD_LOAD_REPORT_H_

// How `phaseloop canary load` shows results: a one-line progress report, a
// readable table, and JSON (README "Drive load at a canary" lists the
// fields). Latencies in milliseconds.

#include <string>
#include <vector>

#include "canary/load/load_results.h"
#include "canary/load/load_spec.h"
#include "canary/load/targets.h"

namespace phaseloop::canary::load {

// "2.0 s: sent 400, done 398, errors 1, p95 1.23 ms"
std::string ProgressLine(const LoadResults& results);

// One row per target and one overall; then errors by reason and late
// starts.
std::string ResultsTable(const LoadResults& results,
                         const std::vector<Target>& targets);

// {"elapsed_s", "spec": {...}, "targets": [{"name", "address", "weight",
//  "intended", "sent", "ok", "errors", "error_count", "latency_ms": {"p50",
//  "p90", "p95", "p99", "max"}, "achieved_rate", "late_starts",
//  "start_delay_ms": {...}}], "overall": {...}}
std::string ResultsJson(const LoadResults& results,
                        const std::vector<Target>& targets,
                        const LoadSpec& spec);

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_LOAD_REPORT_H_
