// `single` inference cost: BuildState + PolicyNetwork::Forward + argmax for
// a realistic candidate network (StateDim(122) inputs, 2 hidden layers of
// 256, 64 candidate outputs), against a naive scalar loop over the same
// weights measured in the same run. Prints µs per decision.
//
//   tools/bazel.sh run -c opt
//   //compiler_driver/policy_runtime:policy_inference_benchmark

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/policy_runtime/policy_network.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"

namespace pr = phaseloop::policy_runtime;

namespace {

// The baseline: the same computation as a plain scalar loop over the proto's
// repeated fields.
void NaiveForward(const phaseloop::v1::PolicyArtifact& artifact,
                  const std::vector<float>& raw, std::vector<float>& x,
                  std::vector<float>& y) {
  x.resize(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    x[i] = (raw[i] - artifact.normalization().mean(i)) *
           artifact.normalization().scale(i);
  }
  for (const auto& layer : artifact.layers()) {
    y.assign(layer.outputs(), 0.0f);
    for (int r = 0; r < layer.outputs(); ++r) {
      float sum = layer.bias(r);
      for (int c = 0; c < layer.inputs(); ++c) {
        sum += layer.weights(r * layer.inputs() + c) * x[c];
      }
      y[r] = layer.activation() == phaseloop::v1::DenseLayer::RELU
                 ? std::max(sum, 0.0f)
                 : sum;
    }
    std::swap(x, y);
  }
}

}  // namespace

int main() {
  constexpr int kActions = 122;
  pr::testing::RandomArtifactOptions options;
  options.hidden = {256, 256};
  // Named as the driver's actions (an artifact naming others is refused).
  const phaseloop::passes::ActionSpace& space =
      phaseloop::passes::ActionSpace::Llvm16();
  for (int a = 0; a < kActions; ++a) {
    options.action_names.push_back(space.at(a % space.size()).name);
  }
  options.candidate_pipelines.push_back("default<Oz>");
  for (int c = 1; c < 64; ++c) {
    options.candidate_pipelines.push_back("a" + std::to_string(c));
  }
  const phaseloop::v1::PolicyArtifact artifact =
      pr::testing::RandomArtifact(options);
  auto network = pr::PolicyNetwork::Create(artifact);
  if (!network.ok()) {
    std::fprintf(stderr, "%s\n", network.status().ToString().c_str());
    return 1;
  }
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> count(0, 5000);
  constexpr int kStates = 64;
  std::vector<std::vector<int64_t>> autophase(kStates,
                                              std::vector<int64_t>(56));
  std::vector<std::vector<int64_t>> inst_count(kStates,
                                               std::vector<int64_t>(70));
  for (int s = 0; s < kStates; ++s) {
    for (auto& v : autophase[s]) v = count(rng);
    for (auto& v : inst_count[s]) v = count(rng);
    inst_count[s][0] = 5000 + count(rng);
  }
  const int dim = pr::StateDim(kActions);
  std::vector<float> raw(dim), out(network->output_dim());
  std::vector<float> x, y;
  using Clock = std::chrono::steady_clock;
  auto time_it = [&](auto&& decide, int iterations) {
    int sink = 0;
    for (int i = 0; i < 200; ++i) sink += decide(i % kStates);  // warm-up
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) sink += decide(i % kStates);
    const double us =
        std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (sink == -1) std::puts("");
    return us / iterations;
  };
  auto eigen_decision = [&](int s) {
    pr::BuildState(autophase[s], inst_count[s], {}, kActions,
                   absl::MakeSpan(raw));
    network->Forward(raw, absl::MakeSpan(out));
    return static_cast<int>(std::max_element(out.begin(), out.end()) -
                            out.begin());
  };
  auto naive_decision = [&](int s) {
    pr::BuildState(autophase[s], inst_count[s], {}, kActions,
                   absl::MakeSpan(raw));
    NaiveForward(artifact, raw, x, y);
    return static_cast<int>(std::max_element(x.begin(), x.end()) - x.begin());
  };
  // Same decisions both ways (a sanity check of the baseline).
  int agree = 0;
  for (int s = 0; s < kStates; ++s)
    agree += eigen_decision(s) == naive_decision(s);
  const double eigen_us = time_it(eigen_decision, 20000);
  const double naive_us = time_it(naive_decision, 2000);
  std::printf(
      "network: %d inputs -> 256 -> 256 -> %d candidates (%d weights)\n", dim,
      network->output_dim(),
      dim * 256 + 256 * 256 + 256 * network->output_dim());
  std::printf(
      "single decision (BuildState + Forward + argmax), Eigen : %8.2f us\n",
      eigen_us);
  std::printf(
      "single decision, naive scalar loop (baseline)       : %8.2f us\n",
      naive_us);
  std::printf("speedup over baseline: %.1fx; same argmax on %d/%d states\n",
              naive_us / eigen_us, agree, kStates);
  return 0;
}
