// Fuzzes policy artifacts as the wrapper, the store and the learner read
// them (ParsePolicyArtifactFile, issue 19).
//
// Each input is tried twice: as a whole artifact file (header, checksum,
// payload), and its payload (what follows the four header lines, or the
// whole input when it has no header) as a PolicyArtifact protobuf given a
// correct header, so mutations reach the validation behind the checksum.
//
// Invariants: no crash, hang or sanitizer report; a refusal names the
// source; an accepted artifact passes ValidatePolicyArtifact and survives a
// write/read round trip unchanged.

#include <string>

#include "common/fuzzing/fuzz_target.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"

namespace phaseloop::policy_runtime {
namespace {

void CheckFile(const std::string& file) {
  const auto parsed = ParsePolicyArtifactFile(file, "fuzz-input");
  if (!parsed.ok()) {
    const std::string message(parsed.status().message());
    FUZZ_CHECK(message.find("fuzz-input") != std::string::npos);
    return;
  }
  FUZZ_CHECK(ValidatePolicyArtifact(*parsed).ok());
  const std::string written = SerializePolicyArtifactFile(*parsed);
  const auto again = ParsePolicyArtifactFile(written, "fuzz-input");
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(SerializePolicyArtifactFile(*again) == written);
}

std::string_view PayloadOf(std::string_view input) {
  if (!LooksLikePolicyArtifactFile(absl::string_view(input.data(), input.size()))) {
    return input;
  }
  size_t pos = 0;
  for (int line = 0; line < 4; ++line) {
    const size_t end = input.find('\n', pos);
    if (end == std::string_view::npos) return {};
    pos = end + 1;
  }
  return input.substr(pos);
}

}  // namespace
}  // namespace phaseloop::policy_runtime

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  const std::string_view input = fuzzing::AsText(data, size);
  policy_runtime::CheckFile(std::string(input));
  const std::string_view payload = policy_runtime::PayloadOf(input);
  v1::PolicyArtifact artifact;
  if (artifact.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    policy_runtime::CheckFile(
        policy_runtime::SerializePolicyArtifactFile(artifact));
  }
  return 0;
}
