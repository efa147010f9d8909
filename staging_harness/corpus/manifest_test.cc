#include "staging_harness/corpus/manifest.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "staging_harness/corpus/corpus_test_util.h"

namespace phaseloop::corpus {
namespace {

v1::ModuleRecord Record(const std::string& name, const std::string& origin) {
  v1::ModuleRecord r;
  r.set_name(name);
  r.set_origin(origin);
  r.set_module_hash("h-" + name);
  r.set_split(SplitForName(name));
  r.set_ir_count_oz(42);
  r.set_bitcode_path("modules/" + name + ".bc");
  return r;
}

TEST(ManifestTest, SplitDependsOnTheNameOnly) {
  std::map<std::string, int> counts;
  for (int i = 0; i < 2000; ++i) {
    const std::string name = "pkg/program" + std::to_string(i);
    const std::string split = SplitForName(name);
    EXPECT_EQ(split, SplitForName(name));
    ++counts[split];
  }
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_NEAR(counts["train"] / 2000.0, 0.8, 0.04);
  EXPECT_NEAR(counts["validation"] / 2000.0, 0.1, 0.03);
  EXPECT_NEAR(counts["test"] / 2000.0, 0.1, 0.03);
  // Pinned: a change here would move programs between splits.
  EXPECT_EQ(SplitForName("bzip2/bzip2"), "validation");
  EXPECT_EQ(SplitForName("zlib"), "train");
}

TEST(ManifestTest, WriteReadRoundTrip) {
  const auto dir = testing::FreshDir("manifest_roundtrip");
  Manifest m;
  m.convention = "real-build";
  m.opt_level = "Oz";
  m.modules = {Record("b", "dir:/x"), Record("a", "dir:/x")};
  m.skipped = {{"c", "dir:/x", "source", "error: nope"}};
  ASSERT_TRUE(WriteManifest(dir.string(), m).ok());
  absl::StatusOr<Manifest> read = ReadManifest(dir.string());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->convention, "real-build");
  EXPECT_EQ(read->opt_level, "Oz");
  ASSERT_EQ(read->modules.size(), 2u);
  EXPECT_EQ(read->modules[0].name(), "a");  // sorted
  EXPECT_EQ(read->modules[1].SerializeAsString(),
            Record("b", "dir:/x").SerializeAsString());
  ASSERT_EQ(read->skipped.size(), 1u);
  EXPECT_EQ(read->skipped[0].reason, "error: nope");
}

TEST(ManifestTest, MissingAndMalformed) {
  const auto dir = testing::FreshDir("manifest_bad");
  EXPECT_TRUE(absl::IsNotFound(ReadManifest(dir.string()).status()));
  testing::WriteSource(dir, kManifestFile, "{not json");
  absl::Status bad = ReadManifest(dir.string()).status();
  EXPECT_TRUE(absl::IsInvalidArgument(bad));
  EXPECT_NE(bad.message().find("manifest.json"), std::string::npos);
  // Found by manifest_fuzzer: a field of another type threw out of the
  // reader instead of naming the file.
  for (const char* text :
       {R"({"format": "phaseloop-corpus-v1", "convention": 3})",
        R"({"format": 1})",
        R"({"format": "phaseloop-corpus-v1", "modules": 7})",
        R"({"format": "phaseloop-corpus-v1", "skipped": [{"name": 1}]})"}) {
    testing::WriteSource(dir, kManifestFile, text);
    const absl::Status status = ReadManifest(dir.string()).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << text << ": " << status;
    EXPECT_NE(status.message().find("manifest.json"), std::string::npos);
  }
}

// A hand-edited or damaged manifest: a module of no split left every
// split without a word, one listed twice was counted twice.
TEST(ManifestTest, ModulesMustHaveASplitAndAName) {
  const auto dir = testing::FreshDir("manifest_values");
  const std::string head = R"({"format": "phaseloop-corpus-v1", "modules": [)";
  const std::string a =
      R"({"name": "a", "split": "train", "module_hash": "h1"})";
  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, std::string>>{
           {head + R"({"name": "a", "split": "bogus"}]})",
            "module 'a' has split 'bogus'"},
           {head + a + ", " + a + "]}", "module 'a' is listed twice"},
           {head + R"({"name": "a", "split": "test", "alloc_size_o3": -5}]})",
            "'alloc_size_o3' is -5"}}) {
    testing::WriteSource(dir, kManifestFile, text);
    const absl::Status status = ReadManifest(dir.string()).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << text << ": " << status;
    EXPECT_NE(status.message().find(expected), std::string::npos) << status;
  }
  testing::WriteSource(dir, kManifestFile, head + a + "]}");
  EXPECT_TRUE(ReadManifest(dir.string()).ok());
}

TEST(ManifestTest, MergeReplacesRebuiltOriginsOnly) {
  Manifest base;
  base.modules = {Record("old/a", "dir:/old"), Record("pkg/x", "debian:pkg_1"),
                  Record("pkg/gone", "debian:pkg_1")};
  base.skipped = {{"pkg/y", "debian:pkg_1", "source", "r"}};
  Manifest update;
  update.modules = {Record("pkg/x", "debian:pkg_1")};
  std::vector<std::string> orphans =
      MergeManifest(base, update, {"debian:pkg_1"});
  ASSERT_EQ(base.modules.size(), 2u);
  EXPECT_EQ(base.modules[0].name(), "old/a");
  EXPECT_EQ(base.modules[1].name(), "pkg/x");
  EXPECT_TRUE(base.skipped.empty());
  EXPECT_EQ(orphans, std::vector<std::string>{"modules/pkg/gone.bc"});
}

}  // namespace
}  // namespace phaseloop::corpus
