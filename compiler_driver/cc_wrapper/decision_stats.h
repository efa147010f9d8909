#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISION_STATS_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISION_STATS_H_

// What `phaseloop stats` reports, computed from decision records: counts by
// outcome and reason (a file compiled with the baseline because the policy
// did not apply is policy_not_applied, never optimized), the bytes the
// policy saved on whole objects (allocated sections) where -Oz's object was
// measured, and where the time went. Pure: the command reads the spool,
// the counters and the zero point; this adds them up and renders them.

#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_space.h"

namespace phaseloop::cc_wrapper {

struct DecisionStats {
  int64_t records = 0;
  int64_t unshipped = 0;  // of which in *.decisions files
  int64_t corrupt_files = 0;
  // Records met again (the same decision_id in another file, or twice in
  // one: a spool file copied or concatenated by hand), counted once.
  int64_t duplicate_records = 0;
  // outcome name -> count; (outcome, reason) -> count.
  std::map<std::string, int64_t> by_outcome;
  std::map<std::pair<std::string, std::string>, int64_t> by_reason;
  std::map<std::string, int64_t> optimized_by_policy;

  // Bytes, over optimized records: with -Oz's object measured beside the
  // chosen one (topk), and without (other policies: nothing to compare).
  int64_t vs_oz_objects = 0;
  int64_t vs_oz_oz_bytes = 0;      // sum of oz_alloc_size
  int64_t vs_oz_chosen_bytes = 0;  // sum of alloc_size
  int64_t larger_than_oz = 0;      // objects whose alloc_size > -Oz's
  int64_t not_measured = 0;        // optimized, no -Oz measurement
  int64_t not_measured_bytes = 0;  // their alloc_size, where recorded
  // topk's outcome cache (outcome_cache.h): choices taken from it, and
  // choices measured and stored.
  int64_t outcome_cache_hits = 0;
  int64_t outcome_cache_misses = 0;

  // Time: per phaseloop-cc-opt invocation (one spool file) its wall time
  // (compile_time_us, the same on each of its records), and per record the
  // optimiser's (policy + passes + codegen) and the policy's alone.
  int64_t timed_invocations = 0;
  int64_t wrapper_us = 0;
  int64_t optimize_us = 0;
  int64_t policy_us = 0;
  std::vector<int64_t> optimized_compile_us, optimized_optimize_us,
      optimized_policy_us;  // optimized records, for percentiles

  // From the spool's counters, since the zero point.
  int64_t dropped_records = 0;
  int64_t evicted_files = 0;
  int64_t failed_records = 0;  // the wrapper could not write them
  SpoolCounters space;         // as last written (bytes, shipped_bytes)
  int64_t max_size = 0;        // the cap in effect for this user (0: none)
  int64_t zeroed_at_ms = 0;    // 0: never zeroed
  // With --buffer: counts from the replay buffer (all of it, not zeroed).
  std::string buffer;
  // decision_ids added so far (AddSpool).
  std::set<std::string> seen_decisions;
};

// Adds the records of `contents` made after `since_ms` (0: all); a record
// whose decision_id was added before is counted once.
void AddSpool(const SpoolContents& contents, int64_t since_ms,
              DecisionStats* stats);

// Adds (outcome, reason) counts from a replay buffer.
void AddBufferCounts(
    const std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>&
        counts,
    DecisionStats* stats);

void PrintStatsTable(const DecisionStats& stats, const std::string& spool,
                     std::ostream& out);
// One line of JSON.
void PrintStatsJson(const DecisionStats& stats, const std::string& spool,
                    std::ostream& out);

// Nearest-rank percentile; 0 for no values.
int64_t Percentile(std::vector<int64_t> values, double p);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_DECISION_STATS_H_
