#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_POLICY_NETWORK_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_POLICY_NETWORK_H_

// The policy's forward pass without libtorch: the artifact's normalisation
// and dense layers, evaluated with Eigen in float32. Created once per
// artifact; Forward is const, safe to call from several threads at once, and
// allocates only on a thread's first call (its scratch buffers).

#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::policy_runtime {

class PolicyNetwork {
 public:
  // Copies the weights out of `artifact` (which need not outlive the
  // network). Fails when ValidatePolicyArtifact fails.
  static absl::StatusOr<PolicyNetwork> Create(
      const v1::PolicyArtifact& artifact);

  int input_dim() const { return input_dim_; }
  int output_dim() const { return output_dim_; }

  // raw_state from BuildState (input_dim floats); applies
  // (raw - mean) * scale, then the layers. out: output_dim floats.
  void Forward(absl::Span<const float> raw_state, absl::Span<float> out) const;

 private:
  using Matrix =
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  struct Layer {
    Matrix weights;        // [outputs][inputs]
    Eigen::VectorXf bias;  // [outputs]
    int activation = 0;    // v1::DenseLayer::Activation
  };

  PolicyNetwork() = default;

  int input_dim_ = 0;
  int output_dim_ = 0;
  int max_width_ = 0;
  Eigen::VectorXf mean_;
  Eigen::VectorXf scale_;
  std::vector<Layer> layers_;
};

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_POLICY_NETWORK_H_
