#ifndef PHASELOOP_REPLAY_BUFFER_SAMPLER_H_
#define PHASELOOP_REPLAY_BUFFER_SAMPLER_H_

// Sampler: what the learner draws training data with. It snapshots the index
// of the episodes matching a filter (split, objective, reward source) from a
// ReplayStore and draws episodes, or single steps, with replacement:
// - kUniform: every episode equally likely (SampleSteps: every step).
// - kAbsReward: proportional to (|reward| + epsilon)^alpha, where reward is
//   the mean final reward of the filter's reward source when it has one,
//   else the episode's return (sum of step rewards).
// - kPriority: proportional to (priority + epsilon)^alpha, the priority
//   column a learner sets with ReplayStore::SetPriorities.
// Each draw reports its probability so a learner can weight by
// 1 / (N * probability) (prioritised replay's importance weights).
//
// Deterministic: the same store contents, options (seed included) and
// sequence of calls give the same draws on every machine (own 64-bit RNG
// and arithmetic; no std:: distributions). Refresh() re-reads the index and
// keeps the RNG's state. Holds `store` by reference: it must outlive the
// sampler. Not thread-safe.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::replay_buffer {

enum class SamplingMode { kUniform, kAbsReward, kPriority };

struct SamplerOptions {
  EpisodeFilter filter;
  SamplingMode mode = SamplingMode::kUniform;
  double epsilon = 1e-3;  // keeps zero-weight episodes drawable
  double alpha = 1.0;     // 0 = uniform, 1 = fully proportional
  uint64_t seed = 0;
};

struct SampledEpisode {
  v1::Episode episode;
  double probability = 0;  // of drawing this episode in one draw
};

struct SampledStep {
  v1::Episode episode;  // without its steps
  v1::Step step;
  double probability = 0;  // of drawing this step in one draw
};

class Sampler {
 public:
  // InvalidArgument for a negative epsilon or alpha.
  static absl::StatusOr<std::unique_ptr<Sampler>> Create(
      ReplayStore& store, const SamplerOptions& options);

  absl::Status Refresh();

  // Episodes in the snapshot.
  size_t size() const { return keys_.size(); }

  // `n` draws. FailedPrecondition when no episode matches the filter.
  absl::StatusOr<std::vector<SampledEpisode>> SampleEpisodes(int n);
  absl::StatusOr<std::vector<SampledStep>> SampleSteps(int n);

 private:
  Sampler(ReplayStore& store, const SamplerOptions& options)
      : store_(store), options_(options), rng_(options.seed) {}
  // Draws an index in [0, size) by the episode weights (by step counts
  // instead when `by_steps`); sets *probability.
  size_t Draw(bool by_steps, double* probability);
  double UniformUnit();  // [0, 1), 53 random bits

  ReplayStore& store_;
  SamplerOptions options_;
  std::mt19937_64 rng_;  // its output sequence is fixed by the standard
  std::vector<EpisodeKey> keys_;
  std::vector<double> cumulative_;        // episode weights
  std::vector<double> cumulative_steps_;  // weights for SampleSteps
};

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_SAMPLER_H_
