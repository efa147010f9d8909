#include "staging_harness/staging/build_probes.h"

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"

namespace phaseloop::staging {

bool IsBuildSystemProbe(const std::string& source) {
  const size_t slash = source.rfind('/');
  absl::string_view name = absl::string_view(source).substr(
      slash == std::string::npos ? 0 : slash + 1);
  // zlib's configure: ztest$$.c, the shell's pid in the name.
  if (absl::ConsumePrefix(&name, "ztest")) {
    const size_t digits = name.find_first_not_of("0123456789");
    if (digits > 0 && digits != absl::string_view::npos &&
        name.substr(digits) == ".c") {
      return true;
    }
  }
  return absl::StartsWith(name, "conftest.") ||
         (absl::StartsWith(name, "CMake") &&
          (absl::StrContains(name, "CompilerABI.") ||
           absl::StrContains(name, "CompilerId."))) ||
         absl::StrContains(source, "CMakeFiles/CMakeTmp/") ||
         absl::StrContains(source, "CMakeFiles/CMakeScratch/") ||
         absl::StrContains(source, "meson-private/");
}

bool IsProbeOrQuery(const v1::Decision& decision) {
  return IsBuildSystemProbe(decision.source()) ||
         (decision.source().empty() &&
          decision.reason() ==
              cc_wrapper::PassThroughReasonName(
                  cc_wrapper::PassThroughReason::kNotCompileOnly) &&
          decision.detail() == cc_wrapper::kNoInputDetail);
}

}  // namespace phaseloop::staging
