#include "staging_harness/corpus/csmith_generator.h"

#include <filesystem>
#include <sstream>

#include "gtest/gtest.h"
#include "staging_harness/corpus/corpus_test_util.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;

TEST(CsmithGeneratorTest, ThreeProgramsThatCompileAndTerminate) {
  if (!CsmithVersion("csmith").ok() ||
      !fs::exists("/usr/include/csmith/csmith.h")) {
    GTEST_SKIP() << "csmith or libcsmith-dev is not installed (tools/setup.sh "
                    "installs both)";
  }
  const fs::path out = testing::FreshDir("csmith_out");
  CsmithOptions options;
  options.count = 3;
  options.first_seed = 7;
  options.timeout_ms = 1000;
  CorpusSettings settings;
  settings.jobs = 2;
  std::ostringstream progress;
  absl::StatusOr<Manifest> m =
      GenerateCsmithModules(options, settings, out.string(), progress);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->modules.size(), 3u) << progress.str();
  uint64_t previous = 0;
  for (const v1::ModuleRecord& r : m->modules) {
    SCOPED_TRACE(r.name());
    ASSERT_EQ(r.name().rfind("csmith/", 0), 0u);
    const uint64_t seed = std::stoull(r.name().substr(7));
    EXPECT_GE(seed, 7u);
    EXPECT_GT(seed, previous);  // seed order
    previous = seed;
    EXPECT_NE(r.origin().find("seed=" + std::to_string(seed)),
              std::string::npos);
    EXPECT_GT(r.ir_count_oz(), 0);
    EXPECT_TRUE(fs::exists(out / r.bitcode_path()));
    EXPECT_TRUE(
        fs::exists(out / "sources" / "csmith" / (std::to_string(seed) + ".c")));
  }
  for (const SkippedEntry& s : m->skipped) EXPECT_FALSE(s.reason.empty());
}

TEST(CsmithGeneratorTest, MissingCsmithIsAClearError) {
  CsmithOptions options;
  options.count = 1;
  options.csmith = "/nonexistent/csmith";
  std::ostringstream progress;
  absl::Status status =
      GenerateCsmithModules(options, CorpusSettings{}, "/tmp/unused", progress)
          .status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_NE(status.message().find("tools/setup.sh"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::corpus
