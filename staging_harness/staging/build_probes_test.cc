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
        "/w/build/meson-private/sanitycheckc.c", "ztest11286.c",
        "./ztest7.c"}) {
    EXPECT_TRUE(IsBuildSystemProbe(source)) << source;
  }
}

TEST(BuildProbesTest, TheProgramsOwnSourcesAreNot) {
  for (const char* source :
       {"wordfreq.c", "src/conftest_helpers.c", "test/conftest/main.c",
        "/w/build/CMakeFiles/zlib.dir/adler32.c", "lib/CMakeLists.c",
        "CMakeUtils.c", "ztest.c", "ztest12x.c", "ztest1.cc", ""}) {
    EXPECT_FALSE(IsBuildSystemProbe(source)) << source;
  }
}

TEST(BuildProbesTest, AQuestionWithNoInputIsNotTheProgram) {
  v1::Decision query;
  query.set_reason("not_compile_only");
  query.set_detail("no input");  // cc --version
  EXPECT_TRUE(IsProbeOrQuery(query));
  v1::Decision link;
  link.set_reason("not_compile_only");  // cc -o prog a.o
  EXPECT_FALSE(IsProbeOrQuery(link));
  link.set_source("conftest.c");  // configure's one-step test link
  EXPECT_TRUE(IsProbeOrQuery(link));
}

}  // namespace
}  // namespace phaseloop::staging
