// BOLT on the example workload through the real wrapper and Debian's
// bolt-16: the rewritten program gives the built one's outputs and BOLT
// used the profile; what BOLT cannot do is said with its fix. (A stage
// with BOLT: stage_workload_test.)
#include "staging_harness/profiling/bolt_optimization.h"

#include <filesystem>
#include <sstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "staging_harness/runner/runner_test_util.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/workloads/workload_source.h"

namespace phaseloop::profiling {
namespace {
namespace fs = std::filesystem;

class BoltOptimizationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<workloads::Workload> loaded = runner::ExampleWorkload();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    workload_ = *loaded;
    absl::StatusOr<runner::Compilers> compilers = runner::RunfilesCompilers();
    ASSERT_TRUE(compilers.ok()) << compilers.status();
    compilers_ = *compilers;
    work_ = testing::MakeTempDir();
    absl::StatusOr<std::string> source =
        workloads::ResolveWorkloadSource(workload_, log_);
    ASSERT_TRUE(source.ok()) << source.status();
    source_ = *source;
    absl::StatusOr<runner::PreparedInputs> inputs =
        runner::PrepareInputs(workload_, source_, work_ + "/inputs", log_);
    ASSERT_TRUE(inputs.ok()) << inputs.status();
    inputs_ = *inputs;
  }

  absl::StatusOr<runner::BuiltVariant> Build(bool relocations) {
    runner::Variant variant;
    variant.name = relocations ? "relocs" : "plain";
    variant.policy = "baseline";
    if (relocations) variant.link_flags = {kBoltLinkFlag};
    return runner::BuildVariant(workload_, source_, compilers_, variant,
                                work_ + "/build-" + variant.name, log_);
  }

  // Each run command's stdout from `built`'s artifacts.
  std::vector<std::string> Outputs(const runner::BuiltVariant& built,
                                   const std::string& name) {
    const std::string dir = work_ + "/run-" + name;
    EXPECT_TRUE(
        runner::PrepareRunDirectory(workload_, built, inputs_, dir).ok());
    runner::PassOptions pass;
    pass.keep_outputs_dir = work_ + "/outputs-" + name;
    absl::StatusOr<std::vector<runner::CommandRun>> runs =
        runner::RunPass(workload_, dir, pass);
    EXPECT_TRUE(runs.ok()) << runs.status();
    std::vector<std::string> outputs;
    if (!runs.ok()) return outputs;
    for (const runner::CommandRun& run : *runs) {
      EXPECT_EQ(run.measurement.exit_status, 0) << run.name;
      outputs.push_back(testing::ReadFileOrEmpty(run.outputs.stdout_path));
      EXPECT_FALSE(outputs.back().empty()) << run.name;
    }
    return outputs;
  }

  workloads::Workload workload_;
  runner::Compilers compilers_;
  std::string work_, source_;
  runner::PreparedInputs inputs_;
  std::ostringstream log_;
};

TEST_F(BoltOptimizationTest, RewritesTheProgramAndKeepsItsOutputs) {
  absl::StatusOr<runner::BuiltVariant> built = Build(/*relocations=*/true);
  ASSERT_TRUE(built.ok()) << built.status() << log_.str();
  BoltOptions options;
  options.input_seed = 7;  // the workload times seed 1
  absl::StatusOr<BoltResult> bolted = BoltOptimize(
      workload_, source_, *built, inputs_, options, work_ + "/bolt", log_);
  ASSERT_TRUE(bolted.ok()) << bolted.status() << log_.str();
  ASSERT_EQ(bolted->artifacts.size(), 1u);
  const BoltedArtifact& wordfreq = bolted->artifacts[0];
  EXPECT_EQ(wordfreq.path, "wordfreq");
  EXPECT_TRUE(wordfreq.optimized);
  EXPECT_EQ(wordfreq.profiles, 2);  // one process per run command
  // The profile moved branches: fewer taken (BOLT prints "=" for none).
  EXPECT_NE(wordfreq.estimate.find("taken branches -"), std::string::npos)
      << wordfreq.estimate;
  EXPECT_EQ(bolted->generated_inputs, 1);  // data/words.txt is shipped
  EXPECT_EQ(bolted->built_artifacts_hash, built->artifacts_hash);
  EXPECT_EQ(bolted->input_seed, std::optional<uint64_t>(7));
  // Trained on inputs of its own seed, not the timed ones.
  const std::string trained =
      testing::ReadFileOrEmpty(work_ + "/bolt/inputs/generated.txt");
  ASSERT_FALSE(trained.empty());
  EXPECT_NE(trained, testing::ReadFileOrEmpty(inputs_.dir + "/generated.txt"));

  // A new program, the built one untouched, the same outputs.
  EXPECT_NE(bolted->artifacts_hash, built->artifacts_hash);
  absl::StatusOr<std::string> as_built =
      runner::HashFiles(built->artifacts_dir, workload_.build.artifacts);
  ASSERT_TRUE(as_built.ok());
  EXPECT_EQ(*as_built, built->artifacts_hash);
  runner::BuiltVariant rewritten = *built;
  rewritten.artifacts_dir = bolted->artifacts_dir;
  EXPECT_EQ(Outputs(rewritten, "bolted"), Outputs(*built, "built"));
}

TEST_F(BoltOptimizationTest, AProgramLinkedWithoutRelocationsNamesTheFlag) {
  absl::StatusOr<runner::BuiltVariant> built = Build(/*relocations=*/false);
  ASSERT_TRUE(built.ok()) << built.status() << log_.str();
  absl::StatusOr<BoltResult> bolted =
      BoltOptimize(workload_, source_, *built, inputs_, BoltOptions{},
                   work_ + "/bolt", log_);
  ASSERT_FALSE(bolted.ok());  // its only program could not be rewritten
  EXPECT_EQ(bolted.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(bolted.status().message().find("wordfreq"), std::string::npos);
  EXPECT_NE(bolted.status().message().find(kBoltLinkFlag), std::string::npos)
      << bolted.status();
}

TEST_F(BoltOptimizationTest, AMissingToolNamesThePackage) {
  BoltOptions options;
  options.llvm_bolt = "/nonexistent/llvm-bolt";
  absl::Status tools = CheckBoltTools(options);
  ASSERT_FALSE(tools.ok());
  EXPECT_NE(tools.message().find("bolt-16"), std::string::npos) << tools;
  EXPECT_TRUE(CheckBoltTools(BoltOptions{}).ok());
}

}  // namespace
}  // namespace phaseloop::profiling
