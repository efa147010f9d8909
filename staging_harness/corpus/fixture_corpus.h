#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_FIXTURE_CORPUS_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_FIXTURE_CORPUS_H_

// Test helper: a real corpus (the `phaseloop corpus build` code path) of
// some compiler_driver/fixtures programs, for tests of tools that read
// corpora. The test must depend on //compiler_driver/fixtures.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/ir/module_loader.h"
#include "staging_harness/corpus/manifest.h"

namespace phaseloop::corpus {

// Copies each fixture `<name>.c` to `base`/src/<name>/main.c (one program
// each) and builds the corpus `base`/corpus from them, replacing whatever
// `base` held, in `convention` (real-build -Oz modules by default).
// Returns the manifest; its directory is `base` + "/corpus".
absl::StatusOr<Manifest> BuildFixtureCorpus(
    const std::string& base, const std::vector<std::string>& names,
    ir::ModuleConvention convention = ir::ModuleConvention::kRealBuild);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_FIXTURE_CORPUS_H_
