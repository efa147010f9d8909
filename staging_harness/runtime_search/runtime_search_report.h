#ifndef PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_REPORT_H_
#define PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_REPORT_H_

// `phaseloop search --objective runtime`'s output: a table for people (the
// hot modules, every evaluation and runoff timing with its verdict and
// speedup interval, the winners and the confirmed speedup), JSON for
// machines.

#include <string>

#include "nlohmann/json.hpp"
#include "staging_harness/runtime_search/runtime_search.h"

namespace phaseloop::runtime_search {

std::string FormatRuntimeSearchTable(const RuntimeSearchResult& result);

// {"workload", "profile": {"method", "samples", "program_samples",
//   "attributed_samples", "modules": [{"module_hash", "source", "share",
//   "hot", "top_symbols"}], "notes"}, "evaluations": [{"index",
//   "module_hash", "source", "pipeline", "verdict", "detail", "speedup":
//   {"median", "low", "high"}, "pairs", "seconds", "build_id",
//   "episode_ids", "executed_ir_ratio" | null, "machine_warnings",
//   "short_runs" | null}],
//   "runoff": [evaluation],
//   "runoff_skipped": [source], "runoff_s", "counts": {"evaluations",
//   "measured", "identical", "miscompile", "refused", "blocked_skipped"}
//   (of the search's evaluations), "stop_reason",
//   "winners": [{"module_hash", "pipeline"}], "confirmation": {...} | null,
//   "confirmed_speedup": {"median", "low", "high"} | null,
//   "policy_written", "candidate_cflags", "link_flags",
//   "profiled": evaluation | null, "profile_confirmed",
//   "bolted": evaluation | null, "bolt": staging::BoltJson | null (what
//   BOLT did to each artifact, when it ran), "bolt_chosen", "search_s",
//   "elapsed_s"}
nlohmann::json RuntimeSearchJson(const RuntimeSearchResult& result);

}  // namespace phaseloop::runtime_search

#endif  // PHASELOOP_STAGING_HARNESS_RUNTIME_SEARCH_RUNTIME_SEARCH_REPORT_H_
