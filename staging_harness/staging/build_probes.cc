#include "staging_harness/staging/build_probes.h"

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace phaseloop::staging {

bool IsBuildSystemProbe(const std::string& source) {
  const size_t slash = source.rfind('/');
  const absl::string_view name = absl::string_view(source).substr(
      slash == std::string::npos ? 0 : slash + 1);
  return absl::StartsWith(name, "conftest.") ||
         (absl::StartsWith(name, "CMake") &&
          (absl::StrContains(name, "CompilerABI.") ||
           absl::StrContains(name, "CompilerId."))) ||
         absl::StrContains(source, "CMakeFiles/CMakeTmp/") ||
         absl::StrContains(source, "CMakeFiles/CMakeScratch/") ||
         absl::StrContains(source, "meson-private/");
}

}  // namespace phaseloop::staging
