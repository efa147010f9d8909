// ComputeNormalization (dataset.h): the per-feature mean and scale the
// network's inputs are normalised with, from the training states.
#include <cmath>
#include <cstdint>
#include <vector>

#include "offline_rl/learner/dataset.h"

namespace phaseloop::offline_rl {

Normalization ComputeNormalization(const TransitionSet& set) {
  const int dim = set.state_dim;
  const int64_t rows = dim == 0 ? 0 : set.states.size() / dim;
  std::vector<double> sum(dim, 0.0), sum_sq(dim, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = set.states.data() + r * dim;
    for (int i = 0; i < dim; ++i) sum[i] += row[i];
  }
  Normalization norm;
  norm.mean.resize(dim, 0.0f);
  norm.scale.resize(dim, 1.0f);
  if (rows == 0) return norm;
  for (int i = 0; i < dim; ++i) sum[i] /= rows;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = set.states.data() + r * dim;
    for (int i = 0; i < dim; ++i) {
      const double d = row[i] - sum[i];
      sum_sq[i] += d * d;
    }
  }
  for (int i = 0; i < dim; ++i) {
    const double stddev = std::sqrt(sum_sq[i] / rows);
    norm.mean[i] = static_cast<float>(sum[i]);
    norm.scale[i] = stddev < 1e-6 ? 1.0f : static_cast<float>(1.0 / stddev);
  }
  return norm;
}

}  // namespace phaseloop::offline_rl
