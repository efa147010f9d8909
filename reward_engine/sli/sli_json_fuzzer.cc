// Fuzzes SLI JSON lines, the input of `phaseloop sli send` (issue 19).
//
// Invariants: no crash, hang or sanitizer report; every non-blank line is
// either a window or a counted error ("line N: ..."); every window accepted
// is valid (ValidateSliWindow) and its sketch builds; printing a window and
// parsing the line again gives the same window.

#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "common/fuzzing/fuzz_target.h"
#include "reward_engine/sli/sli_json.h"
#include "reward_engine/sli/sli_window.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  const std::string text(fuzzing::AsText(data, size));
  std::istringstream in(text);
  const sli::SliJsonLines lines = sli::ParseSliJsonLines(in, 1000);
  FUZZ_CHECK(lines.error_lines >= static_cast<int>(lines.errors.size()));
  for (const std::string& error : lines.errors) {
    FUZZ_CHECK(absl::StartsWith(error, "line "));
  }
  for (const v1::SliWindow& window : lines.windows) {
    FUZZ_CHECK(sli::ValidateSliWindow(window).ok());
    FUZZ_CHECK(sli::WindowSketch(window).ok());
    const auto again = sli::ParseSliWindowJson(sli::SliWindowToJson(window));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->SerializeAsString() == window.SerializeAsString());
  }
  return 0;
}
