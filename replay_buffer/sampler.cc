#include "replay_buffer/sampler.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace phaseloop::replay_buffer {
namespace {

double Weight(const SamplerOptions& options, const EpisodeKey& key) {
  double base = 1;
  switch (options.mode) {
    case SamplingMode::kUniform:
      return 1;
    case SamplingMode::kAbsReward:
      base = std::fabs(options.filter.reward_source.empty() ? key.step_return
                                                            : key.final_reward);
      break;
    case SamplingMode::kPriority:
      base = key.priority;
      break;
  }
  return std::pow(base + options.epsilon, options.alpha);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Sampler>> Sampler::Create(
    ReplayStore& store, const SamplerOptions& options) {
  if (!(options.epsilon >= 0) || !(options.alpha >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sampler epsilon (", options.epsilon, ") and alpha (",
                     options.alpha, ") must be >= 0"));
  }
  std::unique_ptr<Sampler> sampler(new Sampler(store, options));
  absl::Status status = sampler->Refresh();
  if (!status.ok()) return status;
  return sampler;
}

absl::Status Sampler::Refresh() {
  absl::StatusOr<std::vector<EpisodeKey>> keys =
      store_.ListEpisodes(options_.filter);
  if (!keys.ok()) return keys.status();
  keys_ = *std::move(keys);
  cumulative_.clear();
  cumulative_steps_.clear();
  double total = 0, total_steps = 0;
  for (const EpisodeKey& key : keys_) {
    const double w = Weight(options_, key);
    total += w;
    if (key.num_steps > 0) {
      total_steps +=
          options_.mode == SamplingMode::kUniform ? key.num_steps : w;
    }
    cumulative_.push_back(total);
    cumulative_steps_.push_back(total_steps);
  }
  return absl::OkStatus();
}

double Sampler::UniformUnit() {
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

size_t Sampler::Draw(bool by_steps, double* probability) {
  const std::vector<double>& cumulative =
      by_steps ? cumulative_steps_ : cumulative_;
  const double total = cumulative.back();
  const double u = UniformUnit() * total;
  size_t i = std::upper_bound(cumulative.begin(), cumulative.end(), u) -
             cumulative.begin();
  i = std::min(i, cumulative.size() - 1);
  while (i > 0 && cumulative[i] == cumulative[i - 1]) --i;  // weight 0: never
  const double before = i == 0 ? 0 : cumulative[i - 1];
  *probability = (cumulative[i] - before) / total;
  return i;
}

absl::StatusOr<std::vector<SampledEpisode>> Sampler::SampleEpisodes(int n) {
  if (keys_.empty() || cumulative_.back() <= 0) {
    return absl::FailedPreconditionError(
        "no episode in the replay buffer matches the sampler's filter "
        "(split, objective, reward source); write episodes or widen it");
  }
  std::vector<std::string> ids;
  std::vector<double> probabilities;
  for (int k = 0; k < n; ++k) {
    double p = 0;
    ids.push_back(keys_[Draw(/*by_steps=*/false, &p)].episode_id);
    probabilities.push_back(p);
  }
  absl::StatusOr<std::vector<v1::Episode>> episodes = store_.ReadEpisodes(ids);
  if (!episodes.ok()) return episodes.status();
  std::vector<SampledEpisode> samples(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    samples[k].episode = std::move((*episodes)[k]);
    samples[k].probability = probabilities[k];
  }
  return samples;
}

absl::StatusOr<std::vector<SampledStep>> Sampler::SampleSteps(int n) {
  if (keys_.empty() || cumulative_steps_.back() <= 0) {
    return absl::FailedPreconditionError(
        "no step in the replay buffer matches the sampler's filter "
        "(split, objective, reward source); write episodes or widen it");
  }
  std::vector<std::pair<std::string, int32_t>> refs;
  std::vector<double> probabilities;
  for (int k = 0; k < n; ++k) {
    double p = 0;
    const size_t i = Draw(/*by_steps=*/true, &p);
    const int32_t steps = keys_[i].num_steps;
    // A uniform step of the drawn episode.
    refs.emplace_back(keys_[i].episode_id,
                      std::min<int32_t>(steps - 1, static_cast<int32_t>(
                                                       UniformUnit() * steps)));
    probabilities.push_back(p / steps);
  }
  absl::StatusOr<std::vector<EpisodeStep>> steps = store_.ReadSteps(refs);
  if (!steps.ok()) {
    return absl::Status(steps.status().code(),
                        absl::StrCat(steps.status().message(),
                                     " (changed since the sampler's "
                                     "snapshot? call Refresh())"));
  }
  std::vector<SampledStep> samples(refs.size());
  for (size_t k = 0; k < refs.size(); ++k) {
    samples[k].episode = std::move((*steps)[k].episode);
    samples[k].step = std::move((*steps)[k].step);
    samples[k].probability = probabilities[k];
  }
  return samples;
}

}  // namespace phaseloop::replay_buffer
