#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_CSMITH_GENERATOR_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_CSMITH_GENERATOR_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "absl/status/statusor.h"
#include "staging_harness/corpus/manifest.h"
#include "staging_harness/corpus/module_writer.h"

namespace phaseloop::corpus {

struct CsmithOptions {
  int count = 10;  // modules wanted
  uint64_t first_seed = 1;
  int timeout_ms = 2000;  // run-time limit of the -O0 binary
  // Give up after count * max_attempts_per_module seeds.
  int max_attempts_per_module = 10;
  std::string csmith = "csmith";
  std::string include_dir = "/usr/include/csmith";  // libcsmith-dev
};

// Generates csmith programs from seeds first_seed, first_seed+1, ... and
// keeps the first `count` (in seed order, so the result does not depend on
// --jobs) that compile at -O0 and whose binary exits 0 within the time
// limit. Each becomes module "csmith/<seed>" (origin "csmith:<version>
// seed=<seed>") built by the corpus frontend; its source is kept in
// DIR/sources/csmith/<seed>.c. Rejected seeds are skipped entries with the
// reason (does not compile, timed out, exit code). FailedPrecondition when
// csmith or its headers are not installed.
absl::StatusOr<Manifest> GenerateCsmithModules(const CsmithOptions& options,
                                               const CorpusSettings& settings,
                                               const std::string& corpus_dir,
                                               std::ostream& progress);

// "csmith 2.3.0" style version of the installed csmith, or an error.
absl::StatusOr<std::string> CsmithVersion(const std::string& csmith);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_CSMITH_GENERATOR_H_
