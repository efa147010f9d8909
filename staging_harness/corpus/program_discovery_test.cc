#include "staging_harness/corpus/program_discovery.h"

#include <algorithm>
#include <filesystem>

#include "gtest/gtest.h"
#include "staging_harness/corpus/corpus_test_util.h"

namespace phaseloop::corpus {
namespace {

using testing::FreshDir;
using testing::WriteSource;

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(ProgramDiscoveryTest, GroupsByDirectoryAndLeavesOutTestsAndIncludes) {
  const auto root = FreshDir("discovery");
  WriteSource(root, "main.c",
              "#include \"table.c\"\nint main(void){return 0;}\n");
  WriteSource(root, "table.c", "int table[4];\n");
  WriteSource(root, "pngtest.c", "int main(void){return 0;}\n");
  WriteSource(root, "src/a.c", "int a;\n");
  WriteSource(root, "src/deep/b.c", "int b;\n");
  WriteSource(root, "tests/t.c", "int t;\n");
  WriteSource(root, "examples/e.c", "int e;\n");
  WriteSource(root, ".pc/patch/a.c", "int a;\n");
  WriteSource(root, "include/api.h", "int api;\n");
  WriteSource(root, "src/config.h", "#define X 1\n");
  WriteSource(root, "docs/README", "no C here\n");
  WriteSource(root, "tool/main.cpp", "int main() { return 0; }\n");

  absl::StatusOr<Discovery> found = DiscoverSourceGroups(root.string(), "pkg");
  ASSERT_TRUE(found.ok()) << found.status();
  const std::vector<SourceGroup>* groups = &found->groups;
  ASSERT_EQ(groups->size(), 3u);
  const SourceGroup& top = (*groups)[0];
  EXPECT_EQ(top.name, "pkg");
  ASSERT_EQ(top.sources.size(), 1u);  // table.c is included, pngtest.c a test
  EXPECT_EQ(top.sources[0], (root / "main.c").string());
  EXPECT_TRUE(Has(top.frontend_args, "-I" + (root / "include").string()));
  EXPECT_FALSE(Has(top.frontend_args, "-DHAVE_CONFIG_H"));

  const SourceGroup& deep = (*groups)[2];
  EXPECT_EQ(deep.name, "pkg/src/deep");
  EXPECT_TRUE(Has(deep.frontend_args, "-I" + (root / "src").string()));
  EXPECT_TRUE(Has(deep.frontend_args, "-I" + root.string()));
  EXPECT_TRUE(Has(deep.frontend_args, "-DHAVE_CONFIG_H"));
  EXPECT_TRUE(Has(deep.frontend_args, (root / "src" / "config.h").string()));
  EXPECT_EQ((*groups)[1].name, "pkg/src");

  // Everything left out is listed with its reason, sorted by path; a
  // skipped directory only when it holds C sources (docs/ does not).
  std::vector<std::string> left_out;
  for (const LeftOutPath& p : found->left_out) {
    left_out.push_back(
        p.kind + " " +
        std::filesystem::path(p.path).lexically_relative(root).string());
    EXPECT_FALSE(p.reason.empty()) << p.path;
  }
  EXPECT_EQ(left_out,
            (std::vector<std::string>{
                "directory .pc", "directory examples", "source pngtest.c",
                "source table.c", "directory tests", "source tool/main.cpp"}));
}

TEST(ProgramDiscoveryTest, KeepsTestNamedSourcesWhenAsked) {
  const auto root = FreshDir("discovery-keep");
  WriteSource(root, "prog.c", "int f(void);\nint main(void){return f();}\n");
  WriteSource(root, "prog_test.c", "int f(void){return 0;}\n");

  absl::StatusOr<Discovery> dropped = DiscoverSourceGroups(root.string(), "p");
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  ASSERT_EQ(dropped->groups.size(), 1u);
  EXPECT_EQ(dropped->groups[0].sources.size(), 1u);
  ASSERT_EQ(dropped->left_out.size(), 1u);
  EXPECT_NE(dropped->left_out[0].reason.find("--keep-test-sources"),
            std::string::npos);

  DiscoveryOptions keep;
  keep.keep_test_sources = true;
  absl::StatusOr<Discovery> kept =
      DiscoverSourceGroups(root.string(), "p", keep);
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_EQ(kept->groups.size(), 1u);
  EXPECT_EQ(kept->groups[0].sources.size(), 2u);
  EXPECT_TRUE(kept->left_out.empty());
}

TEST(ProgramDiscoveryTest, DirectoryCflagsApplyBelowTheirFileNearestLast) {
  const auto root = FreshDir("discovery-cflags");
  WriteSource(root, "phaseloop-cflags", "-DROOT=1  # every program\n");
  WriteSource(root, "a/main.c", "int main(void){return 0;}\n");
  WriteSource(root, "a/phaseloop-cflags", "# a's own\n-DA=1 -std=c99\n\n");
  WriteSource(root, "a/b/main.c", "int main(void){return 0;}\n");
  WriteSource(root, "c/main.c", "int main(void){return 0;}\n");

  absl::StatusOr<Discovery> found = DiscoverSourceGroups(root.string(), "p");
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->groups.size(), 3u);
  using Flags = std::vector<std::string>;
  EXPECT_EQ(found->groups[0].name, "p/a");
  EXPECT_EQ(found->groups[0].directory_cflags,
            (Flags{"-DROOT=1", "-DA=1", "-std=c99"}));
  EXPECT_EQ(found->groups[1].name, "p/a/b");
  EXPECT_EQ(found->groups[1].directory_cflags,
            (Flags{"-DROOT=1", "-DA=1", "-std=c99"}));
  EXPECT_EQ(found->groups[2].name, "p/c");
  EXPECT_EQ(found->groups[2].directory_cflags, (Flags{"-DROOT=1"}));
}

TEST(ProgramDiscoveryTest, BadCflagsFileNamesFileAndLine) {
  for (const auto& [text, why] :
       std::vector<std::pair<std::string, std::string>>{
           {"-DX=1\nDEFINE_Y\n", ":2: 'DEFINE_Y' is not a flag"},
           {"-o out.o\n", ":1: '-o' changes the frontend's output"},
           {"-DX -ofile\n", ":1: '-ofile' changes"},
           {"# fine\n-MD\n", ":2: '-MD' changes"}}) {
    absl::StatusOr<std::vector<std::string>> parsed =
        ParseCflagsFile(text, "dir/phaseloop-cflags");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
    EXPECT_NE(parsed.status().message().find("dir/phaseloop-cflags" + why),
              std::string::npos)
        << parsed.status();
  }
  const auto root = FreshDir("discovery-bad-cflags");
  WriteSource(root, "x/main.c", "int main(void){return 0;}\n");
  WriteSource(root, "x/phaseloop-cflags", "-c\n");
  EXPECT_TRUE(absl::IsInvalidArgument(
      DiscoverSourceGroups(root.string(), "p").status()));
}

TEST(ProgramDiscoveryTest, MissingDirectoryIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(
      DiscoverSourceGroups("/nonexistent/phaseloop", "x").status()));
}

TEST(ProgramDiscoveryTest, TestStems) {
  EXPECT_TRUE(IsTestFileStem("test"));
  EXPECT_TRUE(IsTestFileStem("pngtest"));
  EXPECT_TRUE(IsTestFileStem("test_util"));
  EXPECT_TRUE(IsTestFileStem("UnitTests"));
  EXPECT_FALSE(IsTestFileStem("bzip2"));
  EXPECT_FALSE(IsTestFileStem("attestation"));
}

}  // namespace
}  // namespace phaseloop::corpus
