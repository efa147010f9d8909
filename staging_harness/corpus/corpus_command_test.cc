// `phaseloop corpus build` as a user runs it: a rebuild that builds nothing
// leaves the corpus as it was.
#include "staging_harness/corpus/corpus_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "staging_harness/corpus/corpus_test_util.h"

namespace phaseloop::corpus {
namespace {
namespace fs = std::filesystem;

// The review: a rebuild with a flag that broke every compile committed an
// empty build, listing every module as gone and deleting its bitcode.
TEST(CorpusCommandTest, ARebuildThatBuildsNothingLeavesTheCorpusAsItWas) {
  const fs::path base = testing::FreshDir("cmd");
  testing::WriteSource(base / "src", "one/main.c",
                       "int main(void) { return 0; }\n");
  BuildFlags flags;
  flags.corpus.out = (base / "corpus").string();
  flags.corpus.jobs = 1;
  flags.source_dirs = {(base / "src").string()};
  std::ostringstream out, err;
  ASSERT_EQ(RunCorpusBuild(flags, out, err), 0) << err.str();
  const fs::path manifest = base / "corpus" / "manifest.json";
  std::stringstream before;
  before << std::ifstream(manifest).rdbuf();
  ASSERT_NE(before.str().find("\"modules\""), std::string::npos);

  flags.corpus.cflags = {"-include/nonexistent.h"};
  std::ostringstream out2, err2;
  EXPECT_EQ(RunCorpusBuild(flags, out2, err2), 2);
  EXPECT_NE(err2.str().find("is left as it was"), std::string::npos)
      << err2.str();
  EXPECT_NE(err2.str().find("nonexistent.h"), std::string::npos) << err2.str();
  std::stringstream after;
  after << std::ifstream(manifest).rdbuf();
  EXPECT_EQ(after.str(), before.str());
  bool bitcode = false;
  for (const auto& entry : fs::recursive_directory_iterator(base / "corpus")) {
    bitcode |= entry.path().extension() == ".bc";
  }
  EXPECT_TRUE(bitcode);
}

// Nothing to build, or nowhere to put it: said before anything is written
// (an empty directory printed "why each program was skipped:" and nothing
// more; a file as --out failed module by module).
TEST(CorpusCommandTest, NoSourcesOrAFileAsOutIsSaidAtOnce) {
  const fs::path base = testing::FreshDir("cmd-empty");
  fs::create_directories(base / "empty");
  BuildFlags flags;
  flags.corpus.out = (base / "corpus").string();
  flags.corpus.jobs = 1;
  flags.source_dirs = {(base / "empty").string()};
  std::ostringstream out, err;
  EXPECT_EQ(RunCorpusBuild(flags, out, err), 2);
  EXPECT_NE(
      err.str().find("no C source (*.c) under " + (base / "empty").string()),
      std::string::npos)
      << err.str();
  EXPECT_FALSE(fs::exists(base / "corpus"));

  testing::WriteSource(base / "src", "one/main.c",
                       "int main(void) { return 0; }\n");
  std::ofstream(base / "a-file") << "x";
  flags.corpus.out = (base / "a-file").string();
  flags.source_dirs = {(base / "src").string()};
  std::ostringstream out2, err2;
  EXPECT_EQ(RunCorpusBuild(flags, out2, err2), 2);
  EXPECT_NE(err2.str().find("--out " + (base / "a-file").string() +
                            " exists and is not a directory"),
            std::string::npos)
      << err2.str();

  fs::create_symlink(base / "gone", base / "dangling");
  flags.corpus.out = (base / "dangling").string();
  std::ostringstream out3, err3;
  EXPECT_EQ(RunCorpusBuild(flags, out3, err3), 2);
  EXPECT_NE(
      err3.str().find("is a symbolic link to " + (base / "gone").string() +
                      ", which does not exist"),
      std::string::npos)
      << err3.str();
}

// A source named in Latin-1 was stored under another name (JSON replaced
// its byte) and a rebuild listed the module twice, after which every read
// refused the corpus: it is left out, listed with the reason, and the rest
// builds, again and again.
TEST(CorpusCommandTest, ASourceWhosePathIsNotUtf8IsListedNotBuilt) {
  const fs::path base = testing::FreshDir("cmd-latin1");
  testing::WriteSource(base / "src", "one/main.c",
                       "int main(void) { return 0; }\n");
  testing::WriteSource(base / "src", "two/caf\xe9.c",
                       "int main(void) { return 1; }\n");
  BuildFlags flags;
  flags.corpus.out = (base / "corpus").string();
  flags.corpus.jobs = 1;
  flags.source_dirs = {(base / "src").string()};
  for (int run = 0; run < 2; ++run) {
    std::ostringstream out, err;
    ASSERT_EQ(RunCorpusBuild(flags, out, err), 0) << err.str();
  }
  std::stringstream manifest;
  manifest << std::ifstream(base / "corpus" / "manifest.json").rdbuf();
  EXPECT_NE(manifest.str().find("src/two/caf\\\\xe9.c"), std::string::npos)
      << manifest.str();
  EXPECT_NE(manifest.str().find("its path is not UTF-8"), std::string::npos);
  EXPECT_NE(manifest.str().find("\"src/one/main\""), std::string::npos)
      << manifest.str();
}

}  // namespace
}  // namespace phaseloop::corpus
