// Collecting the example workload's profile through the real wrapper and
// llvm-profdata, then staging a candidate built with it: the profile reaches
// the in-process compile (the modules change, every unit is still
// optimised by the policy) and the program's outputs stay the baseline's.
#include "staging_harness/profiling/profile_collection.h"

#include <filesystem>
#include <set>
#include <sstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "proto/phaseloop/v1/decision.pb.h"
#include "staging_harness/runner/runner_test_util.h"
#include "staging_harness/staging/stage_workload.h"

namespace phaseloop::profiling {
namespace {
namespace fs = std::filesystem;

class ProfileCollectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Compiles (-c) and a link: the compiles run in process.
    absl::StatusOr<workloads::Workload> loaded =
        runner::TwoUnitExampleWorkload(testing::MakeTempDir());
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    workload_ = *loaded;
    absl::StatusOr<runner::Compilers> compilers = runner::RunfilesCompilers();
    ASSERT_TRUE(compilers.ok()) << compilers.status();
    options_.compilers = *compilers;
    options_.work_dir = testing::MakeTempDir() + "/profile";
  }

  workloads::Workload workload_;
  ProfileOptions options_;
  std::ostringstream log_;
};

TEST_F(ProfileCollectionTest, ProfileGuidedCandidateKeepsOutputs) {
  options_.out = testing::MakeTempDir() + "/example.profdata";
  absl::StatusOr<CollectedProfile> profile =
      CollectProfile(workload_, options_, log_);
  ASSERT_TRUE(profile.ok()) << profile.status() << log_.str();
  EXPECT_EQ(profile->path, options_.out);
  EXPECT_TRUE(fs::is_regular_file(profile->path));
  EXPECT_FALSE(fs::exists(profile->path + ".tmp"));
  EXPECT_EQ(profile->raw_profiles, 2);  // one wordfreq per run command
  EXPECT_NE(profile->summary.find("Maximum function count"), std::string::npos)
      << profile->summary;

  staging::StageOptions stage;
  stage.compilers = options_.compilers;
  stage.work_dir = testing::MakeTempDir();
  stage.timing.min_pairs = 3;
  stage.timing.max_pairs = 4;
  stage.timing.warmup_passes = 0;
  stage.candidate_policy = "baseline";
  stage.candidate_cflags = "-fprofile-instr-use=" + profile->path;
  absl::StatusOr<staging::StageResult> result =
      staging::StageWorkload(workload_, stage, log_);
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, staging::Verdict::kMeasured) << result->detail;
  EXPECT_NE(result->candidate.artifacts_hash, result->baseline.artifacts_hash);
  // Both compiles ran the policy in process, on modules the profile
  // changed (wordfreq.c's counts; extra.c's function never runs).
  std::set<std::string> baseline_hashes, candidate_hashes;
  for (const v1::Decision& d : result->baseline.decisions) {
    if (d.outcome() == v1::OPTIMIZED) baseline_hashes.insert(d.module_hash());
  }
  for (const v1::Decision& d : result->candidate.decisions) {
    if (d.outcome() == v1::OPTIMIZED) candidate_hashes.insert(d.module_hash());
  }
  EXPECT_EQ(baseline_hashes.size(), 2u);
  EXPECT_EQ(candidate_hashes.size(), 2u);
  for (const std::string& hash : candidate_hashes) {
    EXPECT_EQ(baseline_hashes.count(hash), 0u) << hash;
  }
}

TEST_F(ProfileCollectionTest, InputSeedRemakesTheGeneratedInputs) {
  std::string generated[2];
  for (int i = 0; i < 2; ++i) {
    options_.input_seed = 1 + 6 * i;  // the workload's own seed is 1
    absl::StatusOr<CollectedProfile> profile =
        CollectProfile(workload_, options_, log_);
    ASSERT_TRUE(profile.ok()) << profile.status() << log_.str();
    EXPECT_EQ(profile->generated_inputs, 1);  // data/words.txt is shipped
    generated[i] = testing::ReadFileOrEmpty(options_.work_dir +
                                            "/inputs/generated.txt");
    ASSERT_FALSE(generated[i].empty());
  }
  EXPECT_NE(generated[0], generated[1]);
}

TEST_F(ProfileCollectionTest, AMissingToolNamesThePackage) {
  options_.llvm_profdata = "/nonexistent/llvm-profdata";
  absl::StatusOr<CollectedProfile> profile =
      CollectProfile(workload_, options_, log_);
  ASSERT_FALSE(profile.ok());
  EXPECT_NE(profile.status().message().find("llvm-16"), std::string::npos)
      << profile.status();
}

TEST_F(ProfileCollectionTest, ARunThatFailsIsNamed) {
  workload_.runs[1].command = "./wordfreq no-such-file";
  absl::StatusOr<CollectedProfile> profile =
      CollectProfile(workload_, options_, log_);
  ASSERT_FALSE(profile.ok());
  EXPECT_NE(profile.status().message().find("generated"), std::string::npos)
      << profile.status();
}

}  // namespace
}  // namespace phaseloop::profiling
