#ifndef PHASELOOP_OFFLINE_RL_LEARNER_MLP_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_MLP_H_

// The policy / Q network: a multilayer perceptron whose layers map one to
// one onto the artifact's DenseLayers (Linear + ReLU for hidden layers,
// Linear alone for the last). Includes libtorch: keep it out of headers
// other components see (learner.h hides it).

#include <torch/torch.h>

#include <vector>

#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::offline_rl {

class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(int64_t inputs, const std::vector<int>& hidden, int64_t outputs);

  // x: [batch][inputs], already normalised. Returns [batch][outputs].
  torch::Tensor forward(torch::Tensor x);

  // Copies the weights out as DenseLayers (row-major [outputs][inputs]).
  std::vector<v1::DenseLayer> ToDenseLayers() const;

  // Copies every parameter of `other` (same shape) into this network.
  void CopyFrom(const MlpImpl& other);

 private:
  std::vector<torch::nn::Linear> linears_;
};
TORCH_MODULE(Mlp);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_MLP_H_
