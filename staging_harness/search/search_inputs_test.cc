#include "staging_harness/search/search_inputs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/testing/test_util.h"

namespace phaseloop::search {
namespace {

void Touch(const std::string& path) { std::ofstream(path) << "x"; }

TEST(SearchInputs, DirectoryOfSources) {
  const std::string dir = testing::MakeTempDir();
  Touch(dir + "/b.c");
  Touch(dir + "/a.cc");
  Touch(dir + "/m.bc");
  Touch(dir + "/notes.txt");
  auto modules = ListCorpus(dir, "", nullptr);
  ASSERT_TRUE(modules.ok()) << modules.status();
  ASSERT_EQ(modules->size(), 3u);
  EXPECT_EQ((*modules)[0].name, "a.cc");
  EXPECT_EQ((*modules)[2].name, "m.bc");
}

TEST(SearchInputs, ManifestIsReadTolerantly) {
  const std::string dir = testing::MakeTempDir();
  std::filesystem::create_directories(dir + "/modules");
  Touch(dir + "/modules/zlib.bc");
  Touch(dir + "/modules/bzip2.bc");
  Touch(dir + "/stray.c");  // not in the manifest: not searched
  std::ofstream(dir + "/manifest.json") << R"({"version": 3, "modules": [
      {"name": "zlib/minigzip", "bitcode_path": "modules/zlib.bc",
       "opt_level": "Oz", "split": "train", "extra": {"a": 1}},
      {"bitcode_path": "modules/bzip2.bc", "split": "validation"},
      {"name": "broken", "skip_reason": "link error"},
      {"name": "gone", "bitcode_path": "modules/gone.bc"}]})";
  std::vector<std::string> warnings;
  auto modules = ListCorpus(dir, "", &warnings);
  ASSERT_TRUE(modules.ok()) << modules.status();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[0].name, "zlib/minigzip");
  EXPECT_EQ((*modules)[0].path, dir + "/modules/zlib.bc");
  EXPECT_EQ((*modules)[0].opt_level, "Oz");
  EXPECT_EQ((*modules)[1].name, "bzip2.bc");
  EXPECT_EQ(warnings.size(), 2u);  // gone.bc missing, one entry not built

  auto validation = ListCorpus(dir, "validation", nullptr);
  ASSERT_TRUE(validation.ok());
  ASSERT_EQ(validation->size(), 1u);
  EXPECT_EQ((*validation)[0].name, "bzip2.bc");
}

TEST(SearchInputs, ClearErrors) {
  auto missing = ListCorpus("/no/such/corpus", "", nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/no/such/corpus"),
            std::string::npos);

  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/manifest.json") << "{]";
  auto bad = ListCorpus(dir, "", nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("manifest.json"), std::string::npos);

  EXPECT_FALSE(InputFile(dir + "/manifest.json").ok());  // not a module
  EXPECT_FALSE(InputFile(dir + "/nothing.c").ok());
}

}  // namespace
}  // namespace phaseloop::search
