#include "staging_harness/staging/build_probes.h"

#include "gtest/gtest.h"

namespace phaseloop::staging {
namespace {

TEST(BuildProbesTest, ConfigureChecksAreProbes) {
  for (const char* source :
       {"conftest.c", "conftest.cpp", "./conftest.c",
        "/usr/share/cmake-3.25/Modules/CMakeCCompilerABI.c",
        "/usr/share/cmake-3.25/Modules/CMakeCXXCompilerABI.cpp",
        "CMakeFiles/3.25.1/CompilerIdC/CMakeCCompilerId.c",
        "/w/build/CMakeFiles/CMakeScratch/TryCompile-x1/src.c",
        "/w/build/CMakeFiles/CMakeTmp/CheckSymbolExists.c",
        "/w/build/meson-private/sanitycheckc.c"}) {
    EXPECT_TRUE(IsBuildSystemProbe(source)) << source;
  }
}

TEST(BuildProbesTest, TheProgramsOwnSourcesAreNot) {
  for (const char* source :
       {"wordfreq.c", "src/conftest_helpers.c", "test/conftest/main.c",
        "/w/build/CMakeFiles/zlib.dir/adler32.c", "lib/CMakeLists.c",
        "CMakeUtils.c", ""}) {
    EXPECT_FALSE(IsBuildSystemProbe(source)) << source;
  }
}

}  // namespace
}  // namespace phaseloop::staging
