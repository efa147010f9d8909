#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OUTCOME_BUNDLE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OUTCOME_BUNDLE_H_

// Sharing topk's outcome cache (outcome_cache.h) between machines without
// any network on the compile path: `phaseloop cache export` writes every
// entry of a cache to one bundle file, which travels as the user likes (a
// CI artifact, any HTTP cache, a shared directory), and `phaseloop cache
// import` adds a bundle's entries to a machine's cache. One CI machine's
// measurements then serve the fleet: a module another machine measured
// compiles with one pipeline.
//
// A bundle: "phaseloop-outcome-bundle 1\n", then per entry "<key>
// <length>\n" and the entry's bytes, in key order (the same cache gives
// the same bundle). Entries keep their key, which holds the optimizer
// binary's identity: they hit only on machines running the same
// phaseloop-cc-opt (the same install), and never change what a compile
// writes there — a hit gives the choice a measurement would.
//
// Import verifies every entry before it is stored: the key is 32 hex
// digits, the bytes parse as an entry of this format for that key, and the
// pipeline is one a policy may run (passes/pipeline_check.h). An entry the
// cache already holds is left as it is (the local measurement stays); the
// rest are written atomically, and each subdirectory is trimmed to the
// cache's cap afterwards, least recently used first. Entries that fail a
// check are refused and named; the good ones are still imported.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::cc_wrapper {

inline constexpr char kOutcomeBundleMagic[] = "phaseloop-outcome-bundle 1\n";

struct OutcomeExport {
  int64_t entries = 0;               // written to the bundle
  std::vector<std::string> skipped;  // bad entries of the cache, with why
};

// Writes every good entry of the cache at `dir` to `bundle_path`
// (atomically). NotFound when the cache holds nothing; Internal when a file
// cannot be read or written.
absl::StatusOr<OutcomeExport> ExportOutcomeBundle(
    const std::string& dir, const std::string& bundle_path);

struct OutcomeImport {
  int64_t entries = 0;               // in the bundle
  int64_t imported = 0;              // new in the cache
  int64_t present = 0;               // the cache held the key already
  std::vector<std::string> refused;  // "<key>: why", entries not imported
};

// Adds the entries of the bundle at `bundle_path` to the cache at `dir`,
// capped at `max_bytes`. InvalidArgument (naming the file) when it is not
// a bundle or is cut short; NotFound when it cannot be read.
absl::StatusOr<OutcomeImport> ImportOutcomeBundle(
    const std::string& bundle_path, const std::string& dir, int64_t max_bytes);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_OUTCOME_BUNDLE_H_
