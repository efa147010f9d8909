#include "staging_harness/variants/corpus_variants.h"

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "staging_harness/corpus/fixture_corpus.h"

namespace phaseloop::staging {
namespace {

class CorpusVariantsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    const std::string base =
        absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/corpus_variants");
    auto built =
        corpus::BuildFixtureCorpus(base, {"sorting", "bits", "strings"});
    ASSERT_TRUE(built.ok()) << built.status();
    corpus_ = new std::string(base + "/corpus");
    manifest_ = new corpus::Manifest(*built);
  }
  static std::string* corpus_;
  static corpus::Manifest* manifest_;
};
std::string* CorpusVariantsTest::corpus_ = nullptr;
corpus::Manifest* CorpusVariantsTest::manifest_ = nullptr;

TEST_F(CorpusVariantsTest, ListsEveryModuleOfTheCorpus) {
  std::vector<std::string> warnings;
  auto modules = ListCorpusModules(*corpus_, "", &warnings);
  ASSERT_TRUE(modules.ok()) << modules.status();
  std::set<std::string> names;
  for (const CorpusModule& m : *modules) {
    names.insert(m.name);
    EXPECT_TRUE(std::filesystem::exists(m.path)) << m.path;
  }
  std::set<std::string> expected;
  for (const v1::ModuleRecord& r : manifest_->modules)
    expected.insert(r.name());
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(names, expected);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(CorpusVariantsTest, RecordsOfASplitAreThatSplitsOnly) {
  std::set<std::string> splits;
  for (const v1::ModuleRecord& r : manifest_->modules) splits.insert(r.split());
  for (const std::string& split : splits) {
    auto records = ReadCorpusRecords(*corpus_, split);
    ASSERT_TRUE(records.ok()) << records.status();
    ASSERT_FALSE(records->empty());
    for (const v1::ModuleRecord& r : *records) EXPECT_EQ(r.split(), split);
  }
  auto all = ReadCorpusRecords(*corpus_, "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), manifest_->modules.size());
}

TEST_F(CorpusVariantsTest, MissingCorpusNamesTheManifest) {
  auto records = ReadCorpusRecords("/nonexistent/corpus", "train");
  ASSERT_FALSE(records.ok());
  EXPECT_NE(records.status().message().find("/nonexistent/corpus"),
            std::string::npos)
      << records.status();
}

// A crash or a hang in one module's child is that module's outcome; the
// others are measured, and `done` sees every module exactly once.
TEST(MeasureEachInChildTest, ACrashOrHangCostsOnlyItsModule) {
  ChildMeasureOptions options;
  options.threads = 2;
  options.timeout_ms = 2000;
  std::vector<int> calls(4, 0);
  std::vector<MeasureOutcome> outcomes(4);
  MeasureEachInChild(
      4, options,
      [](size_t i) -> absl::StatusOr<std::string> {
        if (i == 1) std::raise(SIGSEGV);
        if (i == 2) {
          for (;;) pause();
        }
        if (i == 3) return absl::InvalidArgumentError("bad module");
        return std::string("measured 0");
      },
      [&](size_t i, const MeasureOutcome& outcome, double elapsed_ms) {
        EXPECT_GE(elapsed_ms, 0);
        ++calls[i];
        outcomes[i] = outcome;
      });
  EXPECT_EQ(calls, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(outcomes[0].kind, MeasureOutcome::kOk);
  EXPECT_EQ(outcomes[0].report, "measured 0");
  EXPECT_EQ(outcomes[1].kind, MeasureOutcome::kCrashed);
  EXPECT_EQ(outcomes[2].kind, MeasureOutcome::kTimedOut);
  EXPECT_EQ(outcomes[3].kind, MeasureOutcome::kFailed);
  EXPECT_NE(outcomes[3].message.find("bad module"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::staging
