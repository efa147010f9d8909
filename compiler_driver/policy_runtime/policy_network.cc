#include "compiler_driver/policy_runtime/policy_network.h"

#include <algorithm>
#include <cassert>

#include "compiler_driver/policy_runtime/policy_artifact.h"

namespace phaseloop::policy_runtime {

absl::StatusOr<PolicyNetwork> PolicyNetwork::Create(
    const v1::PolicyArtifact& artifact) {
  if (absl::Status valid = ValidatePolicyArtifact(artifact); !valid.ok()) {
    return valid;
  }
  PolicyNetwork network;
  const v1::FeatureNormalization& norm = artifact.normalization();
  network.input_dim_ = norm.mean_size();
  network.mean_ =
      Eigen::Map<const Eigen::VectorXf>(norm.mean().data(), norm.mean_size());
  network.scale_ =
      Eigen::Map<const Eigen::VectorXf>(norm.scale().data(), norm.scale_size());
  network.max_width_ = network.input_dim_;
  for (const v1::DenseLayer& source : artifact.layers()) {
    Layer layer;
    layer.weights = Eigen::Map<const Matrix>(source.weights().data(),
                                             source.outputs(), source.inputs());
    layer.bias = Eigen::Map<const Eigen::VectorXf>(source.bias().data(),
                                                   source.outputs());
    layer.activation = source.activation();
    network.max_width_ = std::max(network.max_width_, source.outputs());
    network.output_dim_ = source.outputs();
    network.layers_.push_back(std::move(layer));
  }
  return network;
}

void PolicyNetwork::Forward(absl::Span<const float> raw_state,
                            absl::Span<float> out) const {
  assert(raw_state.size() == static_cast<size_t>(input_dim_));
  assert(out.size() == static_cast<size_t>(output_dim_));
  thread_local Eigen::VectorXf scratch_a;
  thread_local Eigen::VectorXf scratch_b;
  if (scratch_a.size() < max_width_) {
    scratch_a.resize(max_width_);
    scratch_b.resize(max_width_);
  }
  Eigen::Map<const Eigen::VectorXf> raw(raw_state.data(), input_dim_);
  scratch_a.head(input_dim_) = (raw - mean_).cwiseProduct(scale_);
  Eigen::VectorXf* in = &scratch_a;
  Eigen::VectorXf* next = &scratch_b;
  int width = input_dim_;
  for (const Layer& layer : layers_) {
    const int outputs = static_cast<int>(layer.bias.size());
    auto y = next->head(outputs);
    y.noalias() = layer.weights * in->head(width);
    y += layer.bias;
    switch (layer.activation) {
      case v1::DenseLayer::RELU:
        y = y.cwiseMax(0.0f);
        break;
      case v1::DenseLayer::TANH:
        y = y.array().tanh().matrix();
        break;
      default:
        break;
    }
    std::swap(in, next);
    width = outputs;
  }
  std::copy(in->data(), in->data() + width, out.data());
}

}  // namespace phaseloop::policy_runtime
