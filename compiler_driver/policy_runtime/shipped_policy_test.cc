// The policy the product ships (configs/policies/default.plpolicy) is a
// valid artifact the driver can run: a size policy over candidate
// pipelines with -Oz among them, whose forward pass works on a real state.
#include <cmath>
#include <vector>

#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/policy_network.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "gtest/gtest.h"

namespace phaseloop::policy_runtime {
namespace {

TEST(ShippedPolicyTest, DefaultPolicyLoadsAndRuns) {
  auto artifact = ReadPolicyArtifactFile("configs/policies/default.plpolicy");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  ASSERT_TRUE(ValidatePolicyArtifact(*artifact).ok());
  EXPECT_EQ(artifact->objective(), kObjectiveAllocSize);
  EXPECT_EQ(artifact->formulation(), kFormulationCandidate);
  ASSERT_GT(artifact->candidates_size(), 1);
  // -Oz is a candidate, and single mode never takes a candidate training
  // measured more than 1 % larger than -Oz on a module, nor one below the
  // cross-fitted margin (configs/learner/size_candidate_bc.yaml,
  // single_abstain): some are excluded, -Oz is not.
  const int oz = OzCandidateIndex(*artifact);
  ASSERT_GE(oz, 0);
  EXPECT_FALSE(artifact->candidates(oz).single_excluded());
  int excluded = 0;
  for (const auto& c : artifact->candidates()) excluded += c.single_excluded();
  EXPECT_GT(excluded, 0);
  EXPECT_LT(excluded, artifact->candidates_size() - 1);
  // A driver that cannot see the exclusions refuses the file.
  EXPECT_EQ(artifact->format_version(), kPolicyFormatVersionSingleExcluded);

  auto network = PolicyNetwork::Create(*artifact);
  ASSERT_TRUE(network.ok()) << network.status();
  const int actions = artifact->action_names_size();
  std::vector<int64_t> autophase(56, 3), inst_count(70, 2);
  inst_count[0] = 500;  // TotalInsts
  std::vector<float> state(StateDim(actions)), out(network->output_dim());
  BuildState(autophase, inst_count, {}, actions, absl::MakeSpan(state));
  network->Forward(state, absl::MakeSpan(out));
  EXPECT_EQ(network->output_dim(), artifact->candidates_size());
  for (float v : out) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace phaseloop::policy_runtime
