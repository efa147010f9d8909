// Fuzzes corpus manifests (ReadManifest, issue 19): a corpus directory's
// manifest.json as a damaged copy or a hand edit leaves it.
//
// Invariants: no crash, hang or sanitizer report; a refusal is
// InvalidArgument naming the file; an accepted manifest written back
// (WriteManifest) reads back the same, and reading writes nothing.

#include <string>
#include <vector>

#include "common/fuzzing/fuzz_target.h"
#include "staging_harness/corpus/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  fuzzing::ScratchDir scratch;
  scratch.Write(corpus::kManifestFile, fuzzing::AsText(data, size));
  const auto manifest = corpus::ReadManifest(scratch.path());
  FUZZ_CHECK(scratch.Entries() ==
             std::vector<std::string>{corpus::kManifestFile});
  if (!manifest.ok()) {
    FUZZ_CHECK(manifest.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(std::string(manifest.status().message())
                   .find(corpus::kManifestFile) != std::string::npos);
    return 0;
  }
  fuzzing::ScratchDir copy;
  FUZZ_CHECK(corpus::WriteManifest(copy.path(), *manifest).ok());
  const auto again = corpus::ReadManifest(copy.path());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->convention == manifest->convention);
  FUZZ_CHECK(again->opt_level == manifest->opt_level);
  FUZZ_CHECK(again->modules.size() == manifest->modules.size());
  FUZZ_CHECK(again->skipped.size() == manifest->skipped.size());
  return 0;
}
