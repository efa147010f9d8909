#include "compiler_driver/policy_runtime/policy_network.h"

#include <cmath>
#include <random>
#include <vector>

#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/state_features.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"
#include "gtest/gtest.h"

namespace phaseloop::policy_runtime {
namespace {

// One action: state dim 128. Hidden layer of 2 (RELU, TANH variants), then
// 2 candidate outputs; only inputs 0 and 127 have non-zero weights so the
// expected values are computed by hand.
v1::PolicyArtifact TinyArtifact(v1::DenseLayer::Activation hidden) {
  v1::PolicyArtifact artifact;
  artifact.set_format_version(kPolicyFormatVersion);
  artifact.set_objective("text_size");
  artifact.set_formulation("candidate");
  artifact.add_action_names("instcombine");
  auto* norm = artifact.mutable_normalization();
  norm->set_layout(kStateLayoutV1);
  for (int i = 0; i < 128; ++i) {
    norm->add_mean(i == 0 ? 1.0f : 0.0f);
    norm->add_scale(i == 0 ? 2.0f : 1.0f);
  }
  auto* l0 = artifact.add_layers();
  l0->set_inputs(128);
  l0->set_outputs(2);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 128; ++c) {
      float w = 0.0f;
      if (r == 0 && c == 0) w = 1.0f;
      if (r == 0 && c == 127) w = -1.0f;
      if (r == 1 && c == 0) w = -2.0f;
      l0->add_weights(w);
    }
  }
  l0->add_bias(0.5f);
  l0->add_bias(0.25f);
  l0->set_activation(hidden);
  auto* l1 = artifact.add_layers();
  l1->set_inputs(2);
  l1->set_outputs(2);
  for (float w : {1.0f, 2.0f, -1.0f, 0.5f}) l1->add_weights(w);
  l1->add_bias(0.0f);
  l1->add_bias(1.0f);
  for (const char* p : {"default<Oz>", "instcombine"}) {
    auto* c = artifact.add_candidates();
    c->set_name(p);
    c->set_pipeline(p);
  }
  return artifact;
}

TEST(PolicyNetworkTest, MatchesHandComputedReluNetwork) {
  auto network = PolicyNetwork::Create(TinyArtifact(v1::DenseLayer::RELU));
  ASSERT_TRUE(network.ok()) << network.status();
  EXPECT_EQ(network->input_dim(), 128);
  EXPECT_EQ(network->output_dim(), 2);
  std::vector<float> raw(128, 0.0f);
  raw[0] = 3.0f;    // normalised: (3 - 1) * 2 = 4
  raw[127] = 1.0f;  // normalised: 1
  std::vector<float> out(2);
  network->Forward(raw, absl::MakeSpan(out));
  // h0 = relu(4 - 1 + 0.5) = 3.5; h1 = relu(-8 + 0.25) = 0
  // y0 = 3.5 + 0 = 3.5; y1 = -3.5 + 0 + 1 = -2.5
  EXPECT_FLOAT_EQ(out[0], 3.5f);
  EXPECT_FLOAT_EQ(out[1], -2.5f);
}

TEST(PolicyNetworkTest, MatchesHandComputedTanhNetwork) {
  auto network = PolicyNetwork::Create(TinyArtifact(v1::DenseLayer::TANH));
  ASSERT_TRUE(network.ok());
  std::vector<float> raw(128, 0.0f);
  raw[0] = 1.0f;  // normalised 0
  std::vector<float> out(2);
  network->Forward(raw, absl::MakeSpan(out));
  const float h0 = std::tanh(0.5f), h1 = std::tanh(0.25f);
  EXPECT_NEAR(out[0], h0 + 2 * h1, 1e-6);
  EXPECT_NEAR(out[1], -h0 + 0.5f * h1 + 1.0f, 1e-6);
}

// The Eigen path against a plain double-precision loop over the proto.
TEST(PolicyNetworkTest, MatchesScalarReferenceOnRandomNetworks) {
  for (uint64_t seed : {1, 2, 3}) {
    testing::RandomArtifactOptions options;
    options.seed = seed;
    options.hidden = {64, 32};
    options.formulation = seed == 2 ? "stepwise" : "candidate";
    const v1::PolicyArtifact artifact = testing::RandomArtifact(options);
    auto network = PolicyNetwork::Create(artifact);
    ASSERT_TRUE(network.ok()) << network.status();
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-3, 3);
    std::vector<float> raw(network->input_dim());
    for (float& v : raw) v = dist(rng);
    std::vector<double> x(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      x[i] = (raw[i] - artifact.normalization().mean(i)) *
             artifact.normalization().scale(i);
    }
    for (const v1::DenseLayer& layer : artifact.layers()) {
      std::vector<double> y(layer.outputs());
      for (int r = 0; r < layer.outputs(); ++r) {
        double sum = layer.bias(r);
        for (int c = 0; c < layer.inputs(); ++c) {
          sum += layer.weights(r * layer.inputs() + c) * x[c];
        }
        y[r] = layer.activation() == v1::DenseLayer::RELU ? std::max(sum, 0.0)
                                                          : sum;
      }
      x = y;
    }
    std::vector<float> out(network->output_dim());
    network->Forward(raw, absl::MakeSpan(out));
    ASSERT_EQ(out.size(), x.size());
    for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], x[i], 1e-4);
  }
}

TEST(PolicyNetworkTest, CreateRefusesAnInvalidArtifact) {
  v1::PolicyArtifact artifact = TinyArtifact(v1::DenseLayer::RELU);
  artifact.mutable_layers(1)->set_inputs(3);
  EXPECT_FALSE(PolicyNetwork::Create(artifact).ok());
}

}  // namespace
}  // namespace phaseloop::policy_runtime
