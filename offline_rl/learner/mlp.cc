#include "offline_rl/learner/mlp.h"

#include <string>

namespace phaseloop::offline_rl {

MlpImpl::MlpImpl(int64_t inputs, const std::vector<int>& hidden,
                 int64_t outputs) {
  int64_t in = inputs;
  std::vector<int64_t> widths(hidden.begin(), hidden.end());
  widths.push_back(outputs);
  for (size_t i = 0; i < widths.size(); ++i) {
    linears_.push_back(register_module("linear" + std::to_string(i),
                                       torch::nn::Linear(in, widths[i])));
    in = widths[i];
  }
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  for (size_t i = 0; i < linears_.size(); ++i) {
    x = linears_[i]->forward(x);
    if (i + 1 < linears_.size()) x = torch::relu(x);
  }
  return x;
}

std::vector<v1::DenseLayer> MlpImpl::ToDenseLayers() const {
  std::vector<v1::DenseLayer> layers;
  for (size_t i = 0; i < linears_.size(); ++i) {
    const torch::Tensor w = linears_[i]->weight.detach().contiguous();
    const torch::Tensor b = linears_[i]->bias.detach().contiguous();
    v1::DenseLayer layer;
    layer.set_inputs(static_cast<int32_t>(w.size(1)));
    layer.set_outputs(static_cast<int32_t>(w.size(0)));
    layer.mutable_weights()->Add(w.data_ptr<float>(),
                                 w.data_ptr<float>() + w.numel());
    layer.mutable_bias()->Add(b.data_ptr<float>(),
                              b.data_ptr<float>() + b.numel());
    layer.set_activation(i + 1 < linears_.size() ? v1::DenseLayer::RELU
                                                 : v1::DenseLayer::IDENTITY);
    layers.push_back(std::move(layer));
  }
  return layers;
}

void MlpImpl::CopyFrom(const MlpImpl& other) {
  torch::NoGradGuard no_grad;
  const auto mine = parameters();
  const auto theirs = other.parameters();
  for (size_t i = 0; i < mine.size(); ++i) mine[i].copy_(theirs[i]);
}

}  // namespace phaseloop::offline_rl
