#include "offline_rl/learner/learner.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files/atomic_file.h"
#include "common/timing/elapsed.h"
#include "offline_rl/learner/mlp.h"

namespace phaseloop::offline_rl {
namespace {

constexpr char kCheckpointFormat[] = "phaseloop-learner-checkpoint/v1";

uint64_t Mix(uint64_t z) {  // splitmix64's finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Minibatch `step` of a run: `batch` indices in [0, n), a pure function of
// (seed, step) so the data cursor is the step count.
torch::Tensor BatchIndices(uint64_t seed, int64_t step, int batch, int64_t n) {
  torch::Tensor idx = torch::empty({batch}, torch::kLong);
  int64_t* p = idx.data_ptr<int64_t>();
  const uint64_t base = Mix(seed) ^ Mix(static_cast<uint64_t>(step) + 1);
  for (int j = 0; j < batch; ++j) {
    p[j] = static_cast<int64_t>(Mix(base + static_cast<uint64_t>(j)) %
                                static_cast<uint64_t>(n));
  }
  return idx;
}

// FNV-1a 64 in hex: digests that only need to tell two runs apart.
std::string Fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// What fixes a run's trajectory (not its length or logging).
std::string TrajectoryDigest(const LearnerConfig& c) {
  std::string s =
      absl::StrCat(c.formulation, "|", c.algorithm, "|", c.objective, "|",
                   absl::StrJoin(c.network.hidden, ","), "|",
                   c.optimizer.batch_size, "|", c.optimizer.learning_rate, "|",
                   c.optimizer.weight_decay, "|", c.optimizer.max_grad_norm,
                   "|", c.gamma, "|", c.cql_alpha, "|", c.target_update_period,
                   "|", c.seed, "|", c.step_reward_weight, "|", c.reward_scale);
  for (const auto& [source, w] : c.final_reward_weights) {
    absl::StrAppend(&s, "|", source, "=", w);
  }
  return Fnv(s);
}

torch::Tensor RowsTensor(const std::vector<float>& rows, int dim) {
  const int64_t n = dim == 0 ? 0 : static_cast<int64_t>(rows.size()) / dim;
  return torch::from_blob(const_cast<float*>(rows.data()), {n, dim},
                          torch::kFloat)
      .clone();
}

// The artifact's normalisation: (raw - mean) * scale, in float32.
torch::Tensor Normalise(const torch::Tensor& raw, const torch::Tensor& mean,
                        const torch::Tensor& scale) {
  return (raw - mean) * scale;
}

// A transition set as normalised tensors.
struct Tensors {
  torch::Tensor states, next_states, actions, rewards, done;
  bool all_done = true;
  int64_t size = 0;
};

Tensors ToTensors(const TransitionSet& set, const torch::Tensor& mean,
                  const torch::Tensor& scale, double reward_scale) {
  Tensors t;
  t.size = set.size();
  t.states = Normalise(RowsTensor(set.states, set.state_dim), mean, scale);
  t.next_states =
      Normalise(RowsTensor(set.next_states, set.state_dim), mean, scale);
  t.actions = torch::empty({t.size}, torch::kLong);
  t.rewards = torch::empty({t.size}, torch::kFloat);
  t.done = torch::empty({t.size}, torch::kFloat);
  int64_t* actions = t.actions.data_ptr<int64_t>();
  float* rewards = t.rewards.data_ptr<float>();
  float* done = t.done.data_ptr<float>();
  for (int64_t i = 0; i < t.size; ++i) {
    actions[i] = set.actions[i];
    rewards[i] = static_cast<float>(set.rewards[i] * reward_scale);
    done[i] = set.done[i] ? 1.0f : 0.0f;
    t.all_done = t.all_done && set.done[i];
  }
  return t;
}

torch::optim::AdamOptions AdamFor(const OptimizerConfig& c) {
  return torch::optim::AdamOptions(c.learning_rate)
      .weight_decay(c.weight_decay);
}

// One double-DQN step (+ CQL penalty when alpha > 0) on `batch`; returns
// (loss, td, penalty). `next_actions`: when defined, a' = next_actions (FQE
// of a fixed policy) instead of the online network's argmax.
struct Losses {
  double loss = 0, td = 0, penalty = 0;
};

Losses QStep(Mlp& model, Mlp& target, torch::optim::Optimizer& optimizer,
             const Tensors& data, const torch::Tensor& idx, double gamma,
             double alpha, double max_grad_norm,
             const torch::Tensor& next_actions) {
  const torch::Tensor x = data.states.index_select(0, idx);
  const torch::Tensor a = data.actions.index_select(0, idx).unsqueeze(1);
  torch::Tensor y = data.rewards.index_select(0, idx);
  if (!data.all_done) {
    torch::NoGradGuard no_grad;
    const torch::Tensor x2 = data.next_states.index_select(0, idx);
    const torch::Tensor d = data.done.index_select(0, idx);
    const torch::Tensor a2 =
        next_actions.defined() ? next_actions.index_select(0, idx).unsqueeze(1)
                               : model->forward(x2).argmax(1, true);
    const torch::Tensor q2 = target->forward(x2).gather(1, a2).squeeze(1);
    y = y + gamma * (1.0 - d) * q2;
  }
  optimizer.zero_grad();
  const torch::Tensor q = model->forward(x);
  const torch::Tensor q_sa = q.gather(1, a).squeeze(1);
  const torch::Tensor td = torch::smooth_l1_loss(q_sa, y);
  torch::Tensor loss = td;
  torch::Tensor penalty;
  if (alpha > 0) {
    penalty = (torch::logsumexp(q, 1) - q_sa).mean();
    loss = loss + alpha * penalty;
  }
  loss.backward();
  if (max_grad_norm > 0) {
    torch::nn::utils::clip_grad_norm_(model->parameters(), max_grad_norm);
  }
  optimizer.step();
  Losses out;
  out.loss = loss.item<double>();
  out.td = td.item<double>();
  out.penalty = penalty.defined() ? penalty.item<double>() : 0.0;
  return out;
}

}  // namespace

struct Learner::State {
  LearnerConfig config;
  const Dataset* data = nullptr;
  int threads = 1;
  int outputs = 0;
  Normalization norm;
  torch::Tensor mean, scale;
  Tensors train;
  Mlp model{nullptr};
  Mlp target{nullptr};  // cql only
  std::unique_ptr<torch::optim::Adam> optimizer;
  int64_t step = 0;
  std::string config_digest;
  std::string data_digest;
};

Learner::Learner(std::unique_ptr<State> state) : state_(std::move(state)) {}
Learner::~Learner() = default;

int64_t Learner::step() const { return state_->step; }

const Normalization& Learner::normalization() const { return state_->norm; }

absl::StatusOr<std::unique_ptr<Learner>> Learner::Create(
    const LearnerConfig& config, const Dataset& data, int threads) {
  if (threads < 1) {
    return absl::InvalidArgumentError("--threads must be >= 1");
  }
  const bool bc = config.algorithm == "bc";
  const TransitionSet& set =
      bc ? data.train.demonstrations : data.train.transitions;
  if (set.size() == 0) {
    return absl::FailedPreconditionError("no training data for the learner");
  }
  auto s = std::make_unique<State>();
  s->config = config;
  s->data = &data;
  s->threads = threads;
  s->outputs = static_cast<int>(data.action_names.size());
  at::set_num_threads(threads);
  try {
    s->norm = ComputeNormalization(set);
    s->mean = torch::from_blob(s->norm.mean.data(),
                               {static_cast<int64_t>(s->norm.mean.size())},
                               torch::kFloat);
    s->scale = torch::from_blob(s->norm.scale.data(),
                                {static_cast<int64_t>(s->norm.scale.size())},
                                torch::kFloat);
    s->train = ToTensors(set, s->mean, s->scale, config.reward_scale);
    torch::manual_seed(config.seed);
    s->model = Mlp(set.state_dim, config.network.hidden, s->outputs);
    if (!bc) {
      s->target = Mlp(set.state_dim, config.network.hidden, s->outputs);
      s->target->CopyFrom(*s->model);
    }
    s->optimizer = std::make_unique<torch::optim::Adam>(
        s->model->parameters(), AdamFor(config.optimizer));
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("libtorch: ", e.what()));
  }
  s->config_digest = TrajectoryDigest(config);
  s->data_digest = Fnv(data.snapshot);
  return std::unique_ptr<Learner>(new Learner(std::move(s)));
}

absl::Status Learner::Train(
    int64_t until_step, const std::string& checkpoint_path,
    const std::function<void(const TrainProgress&)>& progress) {
  State& s = *state_;
  const LearnerConfig& c = s.config;
  const bool bc = c.algorithm == "bc";
  using Clock = std::chrono::steady_clock;
  auto since = Clock::now();
  int64_t steps_since = 0;
  Losses sum;
  try {
    at::set_num_threads(s.threads);
    while (s.step < until_step) {
      const torch::Tensor idx =
          BatchIndices(c.seed, s.step, c.optimizer.batch_size, s.train.size);
      Losses l;
      if (bc) {
        s.optimizer->zero_grad();
        const torch::Tensor loss = torch::cross_entropy_loss(
            s.model->forward(s.train.states.index_select(0, idx)),
            s.train.actions.index_select(0, idx));
        loss.backward();
        if (c.optimizer.max_grad_norm > 0) {
          torch::nn::utils::clip_grad_norm_(s.model->parameters(),
                                            c.optimizer.max_grad_norm);
        }
        s.optimizer->step();
        l.loss = loss.item<double>();
      } else {
        l = QStep(s.model, s.target, *s.optimizer, s.train, idx, c.gamma,
                  c.cql_alpha, c.optimizer.max_grad_norm, torch::Tensor());
      }
      ++s.step;
      if (!bc && s.step % c.target_update_period == 0) {
        s.target->CopyFrom(*s.model);
      }
      sum.loss += l.loss;
      sum.td += l.td;
      sum.penalty += l.penalty;
      ++steps_since;
      if (progress && c.log_every > 0 &&
          (s.step % c.log_every == 0 || s.step == until_step)) {
        const double seconds = timing::SecondsSince(since);
        TrainProgress p;
        p.step = s.step;
        p.loss = sum.loss / steps_since;
        p.td_loss = sum.td / steps_since;
        p.cql_penalty = sum.penalty / steps_since;
        p.transitions_per_second =
            seconds > 0 ? steps_since * c.optimizer.batch_size / seconds : 0;
        progress(p);
        since = Clock::now();
        steps_since = 0;
        sum = Losses();
      }
      if (!checkpoint_path.empty() && c.checkpoint_every > 0 &&
          s.step % c.checkpoint_every == 0) {
        absl::Status saved = SaveCheckpoint(checkpoint_path);
        if (!saved.ok()) return saved;
      }
    }
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("libtorch: ", e.what()));
  }
  if (!checkpoint_path.empty()) return SaveCheckpoint(checkpoint_path);
  return absl::OkStatus();
}

absl::Status Learner::SaveCheckpoint(const std::string& path) const {
  const State& s = *state_;
  // A fixed temp name: torch records the file name inside the archive, so a
  // unique one would make checkpoints differ run to run.
  const std::string temp = path + ".tmp";
  try {
    torch::serialize::OutputArchive root;
    root.write("format", c10::IValue(std::string(kCheckpointFormat)));
    root.write("step", c10::IValue(static_cast<int64_t>(s.step)));
    root.write("config_digest", c10::IValue(s.config_digest));
    root.write("data_digest", c10::IValue(s.data_digest));
    torch::serialize::OutputArchive model;
    s.model->save(model);
    root.write("model", model);
    if (s.target) {
      torch::serialize::OutputArchive target;
      s.target->save(target);
      root.write("target", target);
    }
    torch::serialize::OutputArchive optimizer;
    s.optimizer->save(optimizer);
    root.write("optimizer", optimizer);
    root.save_to(temp);
  } catch (const c10::Error& e) {
    std::filesystem::remove(temp);
    return absl::InternalError(
        absl::StrCat("cannot write checkpoint ", temp, ": ", e.what()));
  }
  return files::CommitFile(temp, path);
}

absl::Status Learner::LoadCheckpoint(const std::string& path) {
  State& s = *state_;
  if (!std::filesystem::exists(path)) {
    return absl::NotFoundError(absl::StrCat("no checkpoint at ", path,
                                            ": drop --resume to start afresh"));
  }
  try {
    torch::serialize::InputArchive root;
    root.load_from(path);
    c10::IValue format, step, config_digest, data_digest;
    if (!root.try_read("format", format) || !format.isString() ||
        format.toStringRef() != kCheckpointFormat) {
      return absl::DataLossError(
          absl::StrCat(path, " is not a phaseloop learner checkpoint (",
                       kCheckpointFormat, ")"));
    }
    root.read("step", step);
    root.read("config_digest", config_digest);
    root.read("data_digest", data_digest);
    if (config_digest.toStringRef() != s.config_digest) {
      return absl::FailedPreconditionError(absl::StrCat(
          "checkpoint ", path,
          " was made with different hyperparameters or seed: resume with the "
          "same config and --seed, or start afresh without --resume"));
    }
    if (data_digest.toStringRef() != s.data_digest) {
      return absl::FailedPreconditionError(absl::StrCat(
          "checkpoint ", path,
          " was made from different replay-buffer data: resume on the same "
          "buffer, or start afresh without --resume"));
    }
    torch::serialize::InputArchive model;
    root.read("model", model);
    s.model->load(model);
    if (s.target) {
      torch::serialize::InputArchive target;
      root.read("target", target);
      s.target->load(target);
    }
    torch::serialize::InputArchive optimizer;
    root.read("optimizer", optimizer);
    s.optimizer->load(optimizer);
    s.step = step.toInt();
  } catch (const c10::Error& e) {
    return absl::DataLossError(absl::StrCat(
        "cannot read checkpoint ", path, " (", e.what_without_backtrace(),
        "): it is truncated or corrupt; start afresh without --resume"));
  }
  return absl::OkStatus();
}

std::vector<v1::DenseLayer> Learner::ExportLayers() const {
  return state_->model->ToDenseLayers();
}

std::vector<float> Learner::Forward(
    const std::vector<float>& raw_states) const {
  const State& s = *state_;
  torch::NoGradGuard no_grad;
  const torch::Tensor x =
      Normalise(RowsTensor(raw_states, static_cast<int>(s.norm.mean.size())),
                s.mean, s.scale);
  Mlp model = s.model;  // shares the module; forward is non-const in torch
  const torch::Tensor y = model->forward(x).contiguous();
  return std::vector<float>(y.data_ptr<float>(),
                            y.data_ptr<float>() + y.numel());
}

absl::StatusOr<FqeResult> Learner::FittedQEvaluation(
    const TransitionSet& data) const {
  const State& s = *state_;
  const LearnerConfig& c = s.config;
  if (data.size() == 0 || data.initial_count() == 0) {
    return absl::FailedPreconditionError(
        "fitted Q evaluation needs evaluation transitions (the validation "
        "split has none)");
  }
  FqeResult result;
  result.transitions = data.size();
  try {
    torch::NoGradGuard outer_no_grad;
    const Tensors t = ToTensors(data, s.mean, s.scale, c.reward_scale);
    const torch::Tensor initial = Normalise(
        RowsTensor(data.initial_states, data.state_dim), s.mean, s.scale);
    // The evaluated policy's actions, fixed before fitting.
    Mlp model = s.model;  // shares the module; forward is non-const in torch
    const torch::Tensor next_actions = model->forward(t.next_states).argmax(1);
    const torch::Tensor initial_actions =
        model->forward(initial).argmax(1, true);
    // Discounted as Q_fqe is (transitions are in episode order, each
    // episode's last one done): an undiscounted sum read a policy that
    // acts as the logged one 4x worse at gamma 0.9 over 40 steps.
    double returns = 0, discount = 1;
    int64_t episodes = 0;
    for (int64_t i = 0; i < data.size(); ++i) {
      returns += discount * data.rewards[i];
      discount *= c.gamma;
      if (data.done[i] != 0) {
        ++episodes;
        discount = 1;
      }
    }
    result.logged_value = episodes > 0 ? returns / episodes : 0;

    torch::manual_seed(c.seed + 1);
    Mlp q(data.state_dim, c.network.hidden, s.outputs);
    Mlp q_target(data.state_dim, c.network.hidden, s.outputs);
    q_target->CopyFrom(*q);
    torch::optim::Adam optimizer(q->parameters(), AdamFor(c.fqe));
    for (int64_t step = 0; step < c.fqe.steps; ++step) {
      torch::AutoGradMode enable_grad(true);
      const torch::Tensor idx =
          BatchIndices(c.seed ^ 0xf9e0ULL, step, c.fqe.batch_size, t.size);
      const Losses l = QStep(q, q_target, optimizer, t, idx, c.gamma, 0.0,
                             c.fqe.max_grad_norm, next_actions);
      if ((step + 1) % c.target_update_period == 0) q_target->CopyFrom(*q);
      result.final_loss = l.loss;
    }
    result.policy_value =
        q->forward(initial).gather(1, initial_actions).mean().item<double>() /
        c.reward_scale;
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("libtorch: ", e.what()));
  }
  return result;
}

}  // namespace phaseloop::offline_rl
