// phaseloop-cc with a learned policy artifact: the object is written and
// equals what the chosen pipeline gives, the decision records the artifact's
// content hash and how the pipeline was chosen, size policies stay out of
// -O2 builds, and a corrupt artifact falls back to plain clang.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/outcome_bundle.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_space.h"
#include "compiler_driver/cc_wrapper/wrapper_scratch.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"

namespace phaseloop {
namespace {

using cc_wrapper::testing::AbsolutePath;

class ArtifactPolicyWrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cc_ = AbsolutePath("compiler_driver/cc_wrapper/phaseloop-cc");
    source_ = AbsolutePath("compiler_driver/fixtures/sorting.c");
    policy_runtime::testing::RandomArtifactOptions options;
    options.action_names = {"instcombine", "simplifycfg", "mem2reg"};
    options.candidate_pipelines = {"default<Oz>", "default<O1>",
                                   "default<Oz>,function(instcombine)"};
    artifact_ = policy_runtime::testing::RandomArtifact(options);
    artifact_path_ = dir_ + "/size.plpolicy";
    ASSERT_TRUE(
        policy_runtime::WritePolicyArtifactFile(artifact_, artifact_path_)
            .ok());
  }

  int Run(const std::vector<std::string>& argv, std::string* output = nullptr) {
    return scratch_.Run(argv, {}, output);
  }

  std::vector<v1::Decision> Decisions() { return scratch_.Decisions(); }

  cc_wrapper::testing::WrapperScratch scratch_;
  const std::string dir_ = scratch_.dir();
  const std::string spool_ = scratch_.spool();
  std::string cc_, source_, artifact_path_;
  v1::PolicyArtifact artifact_;
};

// clang's code is the same with and without -g, and so is the policy's:
// the features it decides from, the instruction counts its budget and
// records use, the pipeline it picks and the code it emits.
TEST_F(ArtifactPolicyWrapperTest, DebugInfoChangesNoDecision) {
  const std::string spec = "--phaseloop-policy=artifact:" + artifact_path_ +
                           "?mode=topk&k=2&budget=1000000000";
  for (const char* fixture : {"callbacks.c", "interpreter.c"}) {
    const std::string source =
        AbsolutePath(std::string("compiler_driver/fixtures/") + fixture);
    ASSERT_EQ(Run({cc_, "-Oz", "-c", source, "-o", "plain.o", spec}), 0);
    ASSERT_EQ(Run({cc_, "-Oz", "-g", "-c", source, "-o", "debug.o", spec}), 0);
  }
  const std::vector<v1::Decision> d = Decisions();
  ASSERT_EQ(d.size(), 4u);
  for (size_t i = 0; i < d.size(); i += 2) {
    const v1::Decision& plain = d[i];
    const v1::Decision& debug = d[i + 1];
    SCOPED_TRACE(plain.source());
    EXPECT_EQ(plain.outcome(), v1::OPTIMIZED) << plain.detail();
    EXPECT_EQ(debug.outcome(), v1::OPTIMIZED) << debug.detail();
    EXPECT_TRUE(std::equal(plain.autophase().begin(), plain.autophase().end(),
                           debug.autophase().begin(), debug.autophase().end()));
    EXPECT_TRUE(std::equal(plain.inst_count().begin(), plain.inst_count().end(),
                           debug.inst_count().begin(),
                           debug.inst_count().end()));
    EXPECT_EQ(plain.ir_count_before(), debug.ir_count_before());
    EXPECT_EQ(plain.ir_count_after(), debug.ir_count_after());
    EXPECT_EQ(plain.pipeline(), debug.pipeline());
    EXPECT_EQ(plain.text_size(), debug.text_size());
  }
}

TEST_F(ArtifactPolicyWrapperTest, SingleAndTopKDecisionsAreRecorded) {
  const std::string version = policy_runtime::PolicyVersionOf(artifact_);
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "single.o",
                 "--phaseloop-policy=" + artifact_path_}),
            0);
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "topk.o",
                 "--phaseloop-policy=artifact:" + artifact_path_ +
                     "?mode=topk&k=2&budget=1000000000"}),
            0);
  ASSERT_EQ(Run({cc_, "-O2", "-c", source_, "-o", "o2.o",
                 "--phaseloop-policy=" + artifact_path_}),
            0);
  // The same chosen pipeline as a fixed policy gives the same object.
  std::vector<v1::Decision> d = Decisions();
  ASSERT_EQ(d.size(), 3u);
  for (const v1::Decision& decision : d) {
    EXPECT_EQ(decision.policy_version(), version);
    EXPECT_GT(decision.text_size(), 0);
    ASSERT_TRUE(decision.has_alloc_size()) << decision.detail();
    EXPECT_GE(decision.alloc_size(), decision.text_size());
  }
  EXPECT_EQ(d[0].outcome(), v1::OPTIMIZED) << d[0].detail();
  EXPECT_NE(d[0].detail().find("single: candidate"), std::string::npos)
      << d[0].detail();
  EXPECT_FALSE(d[0].has_oz_alloc_size());  // single mode measures nothing
  EXPECT_EQ(d[1].outcome(), v1::OPTIMIZED) << d[1].detail();
  EXPECT_NE(d[1].detail().find("topk:"), std::string::npos) << d[1].detail();
  // topk measured -Oz's whole object beside the one it kept.
  ASSERT_TRUE(d[1].has_oz_alloc_size()) << d[1].detail();
  EXPECT_LE(d[1].alloc_size(), d[1].oz_alloc_size());
  // Every pipeline topk measured is on the record, -Oz first, and the one
  // it kept is the smallest of them (training data from this build).
  EXPECT_TRUE(d[0].topk_measured().empty());
  ASSERT_GE(d[1].topk_measured_size(), 2) << d[1].detail();
  EXPECT_EQ(d[1].topk_measured(0).pipeline(), "default<Oz>");
  EXPECT_EQ(d[1].topk_measured(0).value(), d[1].oz_alloc_size());
  int64_t smallest = d[1].topk_measured(0).value();
  bool kept_listed = false;
  for (const v1::MeasuredPipeline& m : d[1].topk_measured()) {
    smallest = std::min(smallest, m.value());
    kept_listed |=
        m.pipeline() == d[1].pipeline() && m.value() == d[1].alloc_size();
  }
  EXPECT_TRUE(kept_listed) << d[1].pipeline();
  EXPECT_EQ(smallest, d[1].alloc_size());
  // A size policy at -O2: the baseline ran, and the record says so rather
  // than claiming the file was optimized.
  EXPECT_EQ(d[2].outcome(), v1::POLICY_NOT_APPLIED) << d[2].detail();
  EXPECT_EQ(d[2].reason(), "not_applicable_at_level");
  EXPECT_EQ(d[2].pipeline(), "default<O2>");
  EXPECT_NE(d[2].detail().find("does not apply at -O2"), std::string::npos);
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "fixed.o",
                 "--phaseloop-policy=fixed:" + d[0].pipeline()}),
            0);
  EXPECT_EQ(testing::ReadFileOrEmpty(dir_ + "/fixed.o"),
            testing::ReadFileOrEmpty(dir_ + "/single.o"));
  // topk is never larger than -Oz.
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "oz.o",
                 "--phaseloop-policy=baseline"}),
            0);
  d = Decisions();
  ASSERT_EQ(d.size(), 5u);
  EXPECT_LE(d[1].text_size(), d[4].text_size());
  // The -Oz size topk recorded is that of the object plain -Oz gives.
  EXPECT_EQ(d[1].oz_alloc_size(), d[4].alloc_size());
}

// topk writes the object it measured for its choice instead of optimising
// and emitting the module a second time (PHASELOOP_TRACE shows the "kept"
// stage): byte for byte what the chosen pipeline gives when run alone.
TEST_F(ArtifactPolicyWrapperTest, TopKWritesTheObjectItMeasured) {
  // k=2 measures both candidates besides -Oz; on interpreter.c the first
  // gives a smaller object than -Oz, the second (the outliner) a larger one.
  policy_runtime::testing::RandomArtifactOptions options;
  options.action_names = {"instcombine"};
  options.candidate_pipelines = {"default<Oz>", "default<O1>,default<Oz>",
                                 "default<Oz>,codegen<machine-outliner>"};
  const std::string artifact_path = dir_ + "/measured.plpolicy";
  ASSERT_TRUE(
      policy_runtime::WritePolicyArtifactFile(
          policy_runtime::testing::RandomArtifact(options), artifact_path)
          .ok());
  const std::map<std::string, std::string> trace = {{"PHASELOOP_TRACE", "1"}};
  int compiles = 0, off_oz = 0;
  for (const char* fixture : {"sorting.c", "interpreter.c", "strings.c"}) {
    const std::string source =
        AbsolutePath(std::string("compiler_driver/fixtures/") + fixture);
    const std::string topk_object = std::string(fixture) + ".topk.o";
    std::string stderr_text;
    ASSERT_EQ(scratch_.Run({cc_, "-Oz", "-c", source, "-o", topk_object,
                            "--phaseloop-policy=artifact:" + artifact_path +
                                "?mode=topk&k=2&budget=1000000000"},
                           trace, &stderr_text),
              0)
        << stderr_text;
    EXPECT_NE(stderr_text.find("phaseloop-cc: kept"), std::string::npos)
        << stderr_text;
    const v1::Decision topk = Decisions().back();
    ASSERT_EQ(topk.outcome(), v1::OPTIMIZED) << topk.detail();
    if (topk.pipeline() != "default<Oz>") ++off_oz;
    const std::string fixed_object = std::string(fixture) + ".fixed.o";
    ASSERT_EQ(Run({cc_, "-Oz", "-c", source, "-o", fixed_object,
                   "--phaseloop-policy=fixed:" + topk.pipeline()}),
              0);
    EXPECT_EQ(testing::ReadFileOrEmpty(dir_ + "/" + topk_object),
              testing::ReadFileOrEmpty(dir_ + "/" + fixed_object))
        << fixture << ": " << topk.pipeline();
    EXPECT_EQ(Decisions().back().alloc_size(), topk.alloc_size());
    EXPECT_EQ(Decisions().back().ir_count_after(), topk.ir_count_after());
    ++compiles;
  }
  EXPECT_EQ(compiles, 3);
  // At least one choice is not -Oz, so the kept object is not just -Oz's.
  EXPECT_GE(off_oz, 1);
}

// topk's outcome cache, on by default (the scratch's own directory): the
// second compile of the same source (to another object) takes topk's
// choice from the cache, measures nothing, and writes the same bytes; the
// records say which was which. Turned off, every compile measures.
TEST_F(ArtifactPolicyWrapperTest, TheOutcomeCacheGivesTheSameObject) {
  const std::string topk = "--phaseloop-policy=artifact:" + artifact_path_ +
                           "?mode=topk&k=2&budget=1000000000";
  for (const char* object : {"first.o", "second.o"}) {
    ASSERT_EQ(scratch_.Run({cc_, "-Oz", "-c", source_, "-o", object, topk}), 0);
  }
  std::vector<v1::Decision> d = Decisions();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].outcome_cache(), "miss") << d[0].detail();
  EXPECT_FALSE(d[0].topk_measured().empty());
  EXPECT_EQ(d[1].outcome_cache(), "hit") << d[1].detail();
  EXPECT_TRUE(d[1].topk_measured().empty());
  EXPECT_NE(d[1].detail().find("outcome cache hit"), std::string::npos);
  EXPECT_EQ(d[1].pipeline(), d[0].pipeline());
  EXPECT_EQ(d[1].oz_alloc_size(), d[0].oz_alloc_size());
  EXPECT_EQ(testing::ReadFileOrEmpty(dir_ + "/first.o"),
            testing::ReadFileOrEmpty(dir_ + "/second.o"));

  ASSERT_EQ(scratch_.Run({cc_, "-Oz", "-c", source_, "-o", "third.o", topk},
                         {{"PHASELOOP_OUTCOME_CACHE", "off"}}),
            0);
  d = Decisions();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2].outcome_cache(), "") << d[2].detail();
  EXPECT_FALSE(d[2].topk_measured().empty());
  EXPECT_EQ(testing::ReadFileOrEmpty(dir_ + "/first.o"),
            testing::ReadFileOrEmpty(dir_ + "/third.o"));
}

// A compile that falls back to clang (LLVM printed a backend warning while
// topk measured) stores no choice: the choice was stored, and the same
// compile again was a hit that measured nothing, printed nothing and wrote
// another object than clang's (a -Werror build failed, then passed).
TEST_F(ArtifactPolicyWrapperTest, ACompileThatFellBackStoresNoOutcome) {
  const std::string topk = "--phaseloop-policy=artifact:" + artifact_path_ +
                           "?mode=topk&k=2&budget=1000000000";
  for (const char* object : {"first.o", "second.o"}) {
    std::string output;
    ASSERT_EQ(scratch_.Run({cc_, "-Oz", "-Wframe-larger-than=1", "-c", source_,
                            "-o", object, topk},
                           {}, &output),
              0);
    EXPECT_NE(output.find("-Wframe-larger-than"), std::string::npos)
        << object << ": " << output;
  }
  std::vector<v1::Decision> d = Decisions();
  ASSERT_EQ(d.size(), 2u);
  for (const v1::Decision& decision : d) {
    EXPECT_EQ(decision.outcome(), v1::FAIL_OPEN) << decision.detail();
    EXPECT_EQ(decision.reason(), "backend_diagnostics") << decision.detail();
    EXPECT_NE(decision.outcome_cache(), "hit") << decision.detail();
  }
  int entries = 0;
  if (std::filesystem::exists(dir_ + "/outcomes")) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(dir_ + "/outcomes")) {
      // identity/ holds the binary's identity, made at the first lookup.
      entries += entry.is_regular_file() &&
                         entry.path().parent_path().filename() != "identity"
                     ? 1
                     : 0;
    }
  }
  EXPECT_EQ(entries, 0) << "a choice was stored for a compile that fell back";
}

// The same with debug information (the review: a C++ unit at -Os -g got
// more DWARF types from topk's measured object, made from a copy of the
// module, than a cache hit's, made from the module: one compile action, two
// objects, and a shared Bazel cache kept whichever came first).
TEST_F(ArtifactPolicyWrapperTest,
       TheOutcomeCacheGivesTheSameObjectWithDebugInfo) {
  const std::string topk = "--phaseloop-policy=artifact:" + artifact_path_ +
                           "?mode=topk&k=2&budget=1000000000";
  // The review's unit: a lambda given to std::sort, std::string.
  const std::string sorted = dir_ + "/sorted.cc";
  std::ofstream(sorted) << R"(#include <algorithm>
#include <string>
#include <vector>
std::string joined(std::vector<int> v) {
  std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
  std::string out;
  for (int x : v) out += std::to_string(x) + ",";
  return out;
}
)";
  for (const std::string& source :
       {sorted, AbsolutePath("compiler_driver/fixtures/templates.cc"),
        AbsolutePath("compiler_driver/fixtures/sorting.c")}) {
    const std::string name = std::filesystem::path(source).filename();
    const char* fixture = name.c_str();
    // (-Oz only: at -Os no size policy acts, so nothing is cached.)
    for (const char* level : {"-Oz"}) {
      const std::string miss = name + level + "-miss.o";
      const std::string hit = name + level + "-hit.o";
      const std::string off = name + level + "-off.o";
      ASSERT_EQ(
          scratch_.Run({cc_, level, "-g", "-c", source, "-o", miss, topk}), 0);
      ASSERT_EQ(scratch_.Run({cc_, level, "-g", "-c", source, "-o", hit, topk}),
                0);
      ASSERT_EQ(scratch_.Run({cc_, level, "-g", "-c", source, "-o", off, topk},
                             {{"PHASELOOP_OUTCOME_CACHE", "off"}}),
                0);
      std::vector<v1::Decision> d = Decisions();
      ASSERT_GE(d.size(), 3u);
      const v1::Decision& last_hit = d[d.size() - 2];
      EXPECT_EQ(last_hit.outcome_cache(), "hit") << last_hit.detail();
      const std::string want = testing::ReadFileOrEmpty(dir_ + "/" + miss);
      ASSERT_FALSE(want.empty());
      // (compared as booleans: a failure prints no object bytes)
      EXPECT_TRUE(want == testing::ReadFileOrEmpty(dir_ + "/" + hit))
          << fixture << " " << level << ": a hit wrote another object";
      EXPECT_TRUE(want == testing::ReadFileOrEmpty(dir_ + "/" + off))
          << fixture << " " << level << ": uncached wrote another object";
    }
  }
}

// One machine's measurements serve another (outcome_bundle.h): the first
// compiles and exports its cache, the second imports the bundle, and its
// compile of the same source takes topk's choice from it (nothing
// measured) and writes the same object.
TEST_F(ArtifactPolicyWrapperTest, ABundleCarriesChoicesToAnotherMachine) {
  const std::string topk = "--phaseloop-policy=artifact:" + artifact_path_ +
                           "?mode=topk&k=2&budget=1000000000";
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "here.o", topk}), 0);
  const std::string bundle = dir_ + "/outcomes.bundle";
  auto exported = cc_wrapper::ExportOutcomeBundle(dir_ + "/outcomes", bundle);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->entries, 1);

  cc_wrapper::testing::WrapperScratch there;
  auto imported = cc_wrapper::ImportOutcomeBundle(
      bundle, there.dir() + "/outcomes", 16 << 20);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->imported, 1);
  ASSERT_EQ(there.Run({cc_, "-Oz", "-c", source_, "-o", "there.o", topk}), 0);
  const std::vector<v1::Decision> d = there.Decisions();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].outcome_cache(), "hit") << d[0].detail();
  EXPECT_TRUE(d[0].topk_measured().empty());
  EXPECT_EQ(d[0].pipeline(), Decisions().back().pipeline());
  EXPECT_EQ(testing::ReadFileOrEmpty(dir_ + "/here.o"),
            testing::ReadFileOrEmpty(there.dir() + "/there.o"));
}

// CMake compiles by absolute path: the same source in checkouts at other
// paths (its path prefix-mapped, as reproducible builds do) gives the same
// object, and shares the choice (the key leaves source_filename's
// directory out; it missed on every unit).
TEST_F(ArtifactPolicyWrapperTest, ACheckoutAtAnotherPathSharesTheChoice) {
  const std::string topk = "--phaseloop-policy=artifact:" + artifact_path_ +
                           "?mode=topk&k=2&budget=1000000000";
  std::vector<std::string> objects;
  for (const std::string checkout : {"/ci/a", "/home/dev/work/b"}) {
    const std::string root = dir_ + checkout;
    std::filesystem::create_directories(root + "/src");
    std::filesystem::copy_file(source_, root + "/src/sorting.c");
    ASSERT_EQ(
        Run({cc_, "-Oz", "-c", root + "/src/sorting.c", "-o",
             root + "/sorting.o", "-ffile-prefix-map=" + root + "=.", topk}),
        0);
    objects.push_back(testing::ReadFileOrEmpty(root + "/sorting.o"));
  }
  std::vector<v1::Decision> d = Decisions();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(d[0].module_hash(), d[1].module_hash());  // source_filename
  EXPECT_EQ(d[0].outcome_cache(), "miss") << d[0].detail();
  EXPECT_EQ(d[1].outcome_cache(), "hit") << d[1].detail();
  EXPECT_EQ(d[1].pipeline(), d[0].pipeline());
  ASSERT_FALSE(objects[0].empty());
  EXPECT_EQ(objects[0], objects[1]);
  // What the second checkout's miss would have written.
  const std::string root = dir_ + "/home/dev/work/b";
  ASSERT_EQ(scratch_.Run({cc_, "-Oz", "-c", root + "/src/sorting.c", "-o",
                          root + "/measured.o",
                          "-ffile-prefix-map=" + root + "=.", topk},
                         {{"PHASELOOP_OUTCOME_CACHE", "off"}}),
            0);
  EXPECT_EQ(Decisions().back().pipeline(), d[0].pipeline());
  EXPECT_EQ(testing::ReadFileOrEmpty(root + "/measured.o"), objects[1]);
}

// A policy that measures nothing (fixed:, single mode) never touches the
// outcome cache: no directory is made, the records say nothing of it.
TEST_F(ArtifactPolicyWrapperTest, OnlyTopkUsesTheOutcomeCache) {
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "fixed.o",
                 "--phaseloop-policy=fixed:default<Oz>"}),
            0);
  ASSERT_EQ(
      Run({cc_, "-Oz", "-c", source_, "-o", "single.o",
           "--phaseloop-policy=artifact:" + artifact_path_ + "?mode=single"}),
      0);
  for (const v1::Decision& d : Decisions()) {
    EXPECT_EQ(d.outcome(), v1::OPTIMIZED) << d.detail();
    EXPECT_EQ(d.outcome_cache(), "") << d.detail();
  }
  EXPECT_FALSE(std::filesystem::exists(scratch_.dir() + "/outcomes"));
}

// A spool full of unshipped records: the compile goes on (optimised or
// plain clang), the records that do not fit are dropped and counted, and
// nothing already spooled is lost.
TEST_F(ArtifactPolicyWrapperTest, AFullSpoolDropsRecordsNeverTheCompile) {
  const std::map<std::string, std::string> tiny = {
      {"PHASELOOP_SPOOL_MAX_SIZE", "8Ki"}};  // two 4 KiB files
  for (const char* object : {"a.o", "b.o", "c.o"}) {
    ASSERT_EQ(scratch_.Run({cc_, "-Oz", "-c", source_, "-o", object,
                            "--phaseloop-policy=baseline"},
                           tiny),
              0);
    EXPECT_FALSE(testing::ReadFileOrEmpty(dir_ + "/" + object).empty());
  }
  // A pass-through, recorded by the launcher.
  ASSERT_EQ(scratch_.Run({cc_, "-E", source_, "-o", "s.i"}, tiny), 0);
  EXPECT_EQ(Decisions().size(), 2u);
  cc_wrapper::SpoolCounters counters;
  ASSERT_TRUE(cc_wrapper::ReadSpoolCounters(spool_, &counters));
  EXPECT_EQ(counters.dropped_records, 2);
}

// topk's budget counts instructions: `budget=` names it, the deprecated
// clock spelling `budget_ms=M` reads as M * 20 instructions, and a budget
// below the module's size keeps -Oz unmeasured (the decision says so).
TEST_F(ArtifactPolicyWrapperTest, TopKBudgetIsWorkWithTheOldSpellingAsAlias) {
  const std::string topk =
      "--phaseloop-policy=artifact:" + artifact_path_ + "?mode=topk&k=2&";
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "a.o", topk + "budget=1"}),
            0);
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "b.o", topk + "budget_ms=1"}),
            0);
  std::vector<v1::Decision> d = Decisions();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(d[0].detail().find("over the budget of 1"), std::string::npos)
      << d[0].detail();
  EXPECT_NE(d[1].detail().find("over the budget of 20"), std::string::npos)
      << d[1].detail();
  EXPECT_EQ(testing::ReadFileOrEmpty(dir_ + "/a.o"),
            testing::ReadFileOrEmpty(dir_ + "/b.o"));

  // A bad budget is refused by name; the compile still succeeds (fail open).
  std::string output;
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "c.o", topk + "budget=soon"},
                &output),
            0)
      << output;
  d = Decisions();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2].outcome(), v1::FAIL_OPEN);
  EXPECT_NE(d[2].detail().find("budget must be a number"), std::string::npos)
      << d[2].detail();
}

TEST_F(ArtifactPolicyWrapperTest, CorruptArtifactFallsBackToClang) {
  std::string bytes = testing::ReadFileOrEmpty(artifact_path_);
  bytes[bytes.size() - 5] ^= 0x01;
  std::ofstream(dir_ + "/bad.plpolicy", std::ios::binary) << bytes;
  std::string output;
  ASSERT_EQ(Run({cc_, "-Oz", "-c", source_, "-o", "x.o",
                 "--phaseloop-policy=" + dir_ + "/bad.plpolicy"},
                &output),
            0)
      << output;
  EXPECT_FALSE(testing::ReadFileOrEmpty(dir_ + "/x.o").empty());
  std::vector<v1::Decision> d = Decisions();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].outcome(), v1::FAIL_OPEN);
  EXPECT_EQ(d[0].reason(), "policy_unavailable");
  EXPECT_NE(d[0].detail().find("checksum"), std::string::npos) << d[0].detail();
}

}  // namespace
}  // namespace phaseloop
