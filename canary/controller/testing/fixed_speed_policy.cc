// A speed policy artifact for canary tests and benchmarks: a runtime
// candidate policy with two candidates, -O3's own pipeline and --pipeline,
// whose network ignores the module and always picks one of them (--pick
// o3|pipeline). `--pick o3` rolls out a policy that changes nothing (an
// A/A canary); `--pick pipeline` with a weak pipeline, e.g. "instcombine",
// rolls out a candidate that is slow for real (the handler compiled with
// almost no optimisation). Different --seed values give different policy
// versions of the same behaviour.
//
//   fixed_speed_policy --pick pipeline --pipeline instcombine --out
//   slow.plpolicy
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/state_features.h"

namespace pr = phaseloop::policy_runtime;

int main(int argc, char** argv) {
  std::string pick = "o3", pipeline = "instcombine", out;
  int seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--pick") {
      pick = value;
    } else if (flag == "--pipeline") {
      pipeline = value;
    } else if (flag == "--out") {
      out = value;
    } else if (flag == "--seed") {
      seed = std::atoi(value.c_str());
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  if (out.empty() || (pick != "o3" && pick != "pipeline")) {
    std::cerr << "usage: fixed_speed_policy --pick o3|pipeline "
                 "[--pipeline P] [--seed N] --out FILE\n";
    return 2;
  }
  phaseloop::v1::PolicyArtifact artifact;
  artifact.set_format_version(pr::kPolicyFormatVersion);
  artifact.set_objective(pr::kObjectiveRuntime);
  artifact.set_formulation(pr::kFormulationCandidate);
  artifact.set_action_space_version("llvm-16/v1");
  artifact.add_action_names("instcombine");
  const int inputs = pr::StateDim(1);
  auto* normalization = artifact.mutable_normalization();
  normalization->set_layout(pr::kStateLayoutV1);
  for (int i = 0; i < inputs; ++i) {
    normalization->add_mean(0);
    normalization->add_scale(1);
  }
  auto* layer = artifact.add_layers();
  layer->set_inputs(inputs);
  layer->set_outputs(2);
  for (int i = 0; i < 2 * inputs; ++i) layer->add_weights(0);
  layer->add_bias(pick == "o3" ? 10 : 0);
  layer->add_bias(pick == "o3" ? 0 : 10);
  auto* o3 = artifact.add_candidates();
  o3->set_name("o3");
  o3->set_pipeline("default<O3>");
  auto* other = artifact.add_candidates();
  other->set_name("fixed");
  other->set_pipeline(pipeline);
  artifact.set_max_steps(1);
  artifact.set_default_top_k(1);
  auto* metadata = artifact.mutable_metadata();
  metadata->set_algorithm("fixed");
  metadata->set_training_command(absl::StrCat("fixed_speed_policy --pick ",
                                              pick, " --pipeline ", pipeline,
                                              " --seed ", seed));
  metadata->set_seed(static_cast<uint64_t>(seed));
  if (auto s = pr::WritePolicyArtifactFile(artifact, out); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  std::cout << pr::PolicyVersionOf(artifact) << "\n";
  return 0;
}
