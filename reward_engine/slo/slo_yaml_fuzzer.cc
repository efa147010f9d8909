// Fuzzes SLO files (ParseSloYaml) (issue 19).
//
// Invariants: no crash, hang or sanitizer report (yaml-cpp throws on some
// inputs: the parser must turn that into an error, never let it escape);
// a refusal is InvalidArgument naming the file, so a user knows which file
// to fix.

#include <string>

#include "common/fuzzing/fuzz_target.h"
#include "reward_engine/slo/slo_config.h"

namespace {
constexpr char kSource[] = "fuzz-input.yaml";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  const std::string text(fuzzing::AsText(data, size));
  const auto parsed = slo::ParseSloYaml(text, kSource);
  fuzzing::CheckClearRefusal(parsed.status(), kSource);
  return 0;
}
