// Fuzzes service files (LoadServiceConfig: the service, its handler, load,
// rollout and the files they name; issue 19).
//
// The input is written to a scratch directory as svc.yaml; the rollout's
// judge and the budget policy, when named relative to it, resolve there
// (and are missing unless the input names the shipped ones by absolute
// path, which it cannot know).
//
// Invariants: no crash, hang or sanitizer report; a refusal names
// svc.yaml; nothing is written beside it.

#include <string>
#include <vector>

#include "canary/controller/service_config.h"
#include "common/fuzzing/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  fuzzing::ScratchDir scratch;
  scratch.Write("svc.yaml", fuzzing::AsText(data, size));
  const std::string path = scratch.path() + "/svc.yaml";
  const auto config = canary::LoadServiceConfig(path);
  if (!config.ok()) {
    FUZZ_CHECK(std::string(config.status().message()).find("svc.yaml") !=
               std::string::npos);
  }
  FUZZ_CHECK(scratch.Entries() == std::vector<std::string>{"svc.yaml"});
  return 0;
}
