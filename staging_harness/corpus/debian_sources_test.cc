#include "staging_harness/corpus/debian_sources.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "staging_harness/corpus/corpus_builder.h"
#include "staging_harness/corpus/corpus_test_util.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;

// Bazel gives tests a HOME of their own: the cache is the real user's.
std::string RealCache() {
  const char* cache = std::getenv("PHASELOOP_CACHE");
  if (cache != nullptr && *cache != '\0') {
    return (fs::path(cache) / "debian-src").string();
  }
  const passwd* user = getpwuid(getuid());
  return (fs::path(user->pw_dir) / ".cache" / "phaseloop" / "debian-src")
      .string();
}

TEST(DebianSourcesTest, DefaultListIsRealAndLargeEnough) {
  const auto& packages = DefaultDebianPackages();
  EXPECT_GE(packages.size(), 25u);
  EXPECT_EQ(std::set<std::string>(packages.begin(), packages.end()).size(),
            packages.size());
  for (const std::string& p : packages) {
    for (const char* reserved :
         {"cbench", "mibench", "polybench", "test-suite"}) {
      EXPECT_EQ(p.find(reserved), std::string::npos) << p;
    }
  }
}

TEST(DebianSourcesTest, BadNameIsRejectedWithoutNetwork) {
  DebianFetcher fetcher(testing::FreshDir("debian_bad").string());
  std::ostringstream progress;
  EXPECT_TRUE(absl::IsInvalidArgument(
      fetcher.Fetch("Not A Package!", progress).status()));
}

TEST(DebianSourcesTest, BuildsCachedBzip2AndZlibWithoutNetwork) {
  const std::string cache = RealCache();
  for (const char* p : {"bzip2", "zlib"}) {
    if (!CachedDebianSource(cache, p).ok()) {
      GTEST_SKIP() << p << " is not in " << cache
                   << " (tools/fetch_sources.sh downloads it; tests never do)";
    }
  }
  DebianFetcher fetcher(cache);  // cached: must not touch apt or the network
  std::ostringstream progress;
  const fs::path out = testing::FreshDir("debian_out");
  std::vector<SourceTree> trees;
  for (const char* p : {"bzip2", "zlib"}) {
    absl::StatusOr<DebianSource> source = fetcher.Fetch(p, progress);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ(source->origin().rfind(std::string("debian:") + p + "_", 0), 0u);
    // A private copy: the shared cache is never configured or written.
    absl::StatusOr<std::string> tree =
        PrepareWorkTree(*source, (out / ".sources").string());
    ASSERT_TRUE(tree.ok()) << tree.status();
    EXPECT_TRUE(PrepareWorkTree(*source, (out / ".sources").string()).ok());
    trees.push_back({*tree, p, source->origin()});
  }
  EXPECT_EQ(progress.str().find("downloading"), std::string::npos);
  CorpusSettings settings;
  settings.jobs = 2;
  absl::StatusOr<Manifest> built =
      BuildModules(trees, settings, out.string(), progress);
  ASSERT_TRUE(built.ok()) << built.status();
  std::set<std::string> names;
  for (const v1::ModuleRecord& r : built->modules) names.insert(r.name());
  EXPECT_TRUE(names.count("bzip2/bzip2")) << progress.str();
  EXPECT_TRUE(names.count("zlib")) << progress.str();
  EXPECT_FALSE(fs::exists(fs::path(cache) / "zlib" / ".phaseloop-configured"));
}

}  // namespace
}  // namespace phaseloop::corpus
