#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_INPUTS_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::search {

// One module to search: a C/C++ source, .bc or .ll file.
struct ModuleInput {
  std::string name;
  std::string path;
  std::string opt_level;  // frontend -O level of a corpus module, if known
  int64_t ir_count_o0 =
      0;  // unoptimised ir_count from the manifest; 0 = unknown
};

// The modules of --corpus DIR:
//  - a corpus directory (`phaseloop corpus build`): DIR/manifest.json lists
//    them. The reader is tolerant: the module list is the top-level array or
//    the "modules" array; of each entry it uses `bitcode_path` (relative to
//    DIR unless absolute), `name` (default: the file name), and `opt_level`
//    (else the manifest's top-level one) and `split` when present. Entries
//    without a bitcode_path (programs that failed to build) or whose file is
//    missing are skipped with a warning.
//  - otherwise every C/C++ source, .bc and .ll file directly in DIR, sorted.
// `split` (when not empty) keeps only manifest entries of that split.
absl::StatusOr<std::vector<ModuleInput>> ListCorpus(
    const std::string& dir, const std::string& split,
    std::vector<std::string>* warnings);

// One --input FILE (a source, .bc or .ll that exists).
absl::StatusOr<ModuleInput> InputFile(const std::string& path);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_INPUTS_H_
