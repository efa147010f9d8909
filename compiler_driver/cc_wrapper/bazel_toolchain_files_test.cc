#include "compiler_driver/cc_wrapper/bazel_toolchain_files.h"

#include <string>

#include "compiler_driver/policy_runtime/topk_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phaseloop::cc_wrapper {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

BuildFileSettings Settings() {
  BuildFileSettings s;
  s.package = "tools/phaseloop";
  s.include_dirs = {"/usr/include"};
  s.tool_paths = {{"ar", "/usr/bin/llvm-ar-16"}};
  s.use_lld = true;
  return s;
}

TEST(RenderBuildFileTest, PolicyIsACompileFlagAndACompilerInput) {
  const std::string build = RenderBuildFile(Settings());
  EXPECT_THAT(build, StartsWith(kGeneratedMarker));
  EXPECT_THAT(
      build,
      HasSubstr("#   build --crosstool_top=//tools/phaseloop:toolchain\n"));
  EXPECT_THAT(build,
              HasSubstr("compile_flags = [\n        "
                        "\"--phaseloop-policy=tools/phaseloop/policy\",\n"));
  EXPECT_THAT(build,
              HasSubstr("name = \"compiler_files\",\n    srcs = [\n"
                        "        \"cc_wrapper.sh\",\n        \"policy\",\n"));
  EXPECT_THAT(
      build,
      HasSubstr("name = \"linker_files\",\n    srcs = [\"cc_wrapper.sh\"],"));
  EXPECT_THAT(build, HasSubstr("\"gcc\": \"cc_wrapper.sh\",\n        "
                               "\"ar\": \"/usr/bin/llvm-ar-16\",\n"));
  EXPECT_THAT(build, HasSubstr("\"-fuse-ld=lld\""));
  EXPECT_THAT(build, HasSubstr("\"-D__TIME__=\\\"redacted\\\"\""));
}

TEST(RenderBuildFileTest, RootPackageAndNoLld) {
  BuildFileSettings s = Settings();
  s.package = "";
  s.use_lld = false;
  const std::string build = RenderBuildFile(s);
  EXPECT_THAT(build, HasSubstr("\"--phaseloop-policy=policy\""));
  EXPECT_THAT(build, Not(HasSubstr("-fuse-ld=lld")));
}

// The toolchain's policy line is the wrapper's default spec: a change of
// topk's default k or budget (policy_runtime/topk_defaults.h) reaches it.
TEST(ArtifactPolicyFileTest, EndsWithTheWrappersDefaultSpec) {
  const std::string file = ArtifactPolicyFile();
  EXPECT_THAT(file, StartsWith("# The phaseloop policy of this Bazel"));
  EXPECT_THAT(file, HasSubstr("the best of the 4 candidate\n"));
  const std::string last =
      "\nartifact:policy.plpolicy?mode=topk&k=4&budget=10000\n";
  ASSERT_GE(file.size(), last.size());
  EXPECT_EQ(file.substr(file.size() - last.size()), last);
  EXPECT_EQ(policy_runtime::DefaultTopKQuery(), "?mode=topk&k=4&budget=10000");
}

TEST(RenderCcWrapperTest, QuotesEveryPath) {
  const std::string script = RenderCcWrapper(
      {"/opt/it's/phaseloop-cc", "0123456789abcdef", "/usr/bin/clang-16",
       "/home/a b/.cache/phaseloop/spool"});
  EXPECT_THAT(script, StartsWith("#!/bin/sh\n"));
  EXPECT_THAT(script, HasSubstr("fingerprint: 0123456789abcdef\n"));
  EXPECT_THAT(script, HasSubstr("phaseloop_cc='/opt/it'\\''s/phaseloop-cc'\n"));
  EXPECT_THAT(script, HasSubstr("spool='/home/a b/.cache/phaseloop/spool'\n"));
  EXPECT_THAT(script, HasSubstr("export PATH='/usr/bin'\":$PATH\"\n"));
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
