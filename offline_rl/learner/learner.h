#ifndef PHASELOOP_OFFLINE_RL_LEARNER_LEARNER_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_LEARNER_H_

// The learner: trains one network on a Dataset with libtorch and hands the
// result back as artifact layers. This header is libtorch-free on purpose
// (every file that includes <torch/torch.h> costs ~60 s and ~1.2 GB to
// compile); only learner.cc and mlp.cc see torch.
//
// Algorithms (LearnerConfig.algorithm):
// - "bc": behaviour cloning — cross-entropy between the network's outputs
//   (as logits) and the demonstrations' actions (best-known sequences, or
//   the best measured candidate per module).
// - "cql": discrete conservative Q-learning — double DQN (the online network
//   picks a' in s', the target network, a hard copy every
//   target_update_period steps, scores it) with a Huber TD loss, plus
//   cql_alpha * (logsumexp_a Q(s, a) - Q(s, a_logged)). The candidate
//   formulation is one-step (every transition done), i.e. the bandit case.
// Either way the policy is greedy: argmax of the network's outputs.
//
// Reproducibility: the network is initialised from torch::manual_seed(seed)
// and minibatch k of step t is drawn by a counter-based hash of (seed, t, k)
// (the data cursor is the step itself), so the same config, seed, data and
// thread count give bit-identical weights, and a run resumed from a
// checkpoint continues exactly as if it had not stopped.
//
// A Learner is used by one thread at a time (it uses `threads` intra-op
// threads itself). It keeps a reference to the Dataset, which must outlive it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/learner_config.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::offline_rl {

struct TrainProgress {
  int64_t step = 0;
  double loss = 0;         // mean over the steps since the last report
  double td_loss = 0;      // cql only
  double cql_penalty = 0;  // cql only
  double transitions_per_second = 0;  // since the last report
};

struct FqeResult {
  // Estimated value of the greedy policy: mean over the evaluation data's
  // initial states of Q_fqe(s0, argmax_a Q(s0, a)).
  double policy_value = 0;
  // The logged (behaviour) data's mean return per episode, discounted by
  // gamma as policy_value is.
  // Both in the data's reward units (reward_scale undone).
  double logged_value = 0;
  double final_loss = 0;
  int64_t transitions = 0;
};

class Learner {
 public:
  // Initialises the network (and target network for cql) and the optimizer
  // for `data.train`; normalisation comes from the training states.
  // `threads` >= 1 sets libtorch's intra-op threads (process-wide).
  static absl::StatusOr<std::unique_ptr<Learner>> Create(
      const LearnerConfig& config, const Dataset& data, int threads);
  ~Learner();

  int64_t step() const;

  // Trains until step() == until_step. Every config.log_every steps calls
  // `progress` (if set); every config.checkpoint_every steps (and at the
  // end) saves a checkpoint to `checkpoint_path` when it is not empty.
  absl::Status Train(int64_t until_step, const std::string& checkpoint_path,
                     const std::function<void(const TrainProgress&)>& progress);

  // The checkpoint: model, target network, optimizer state, step (= data
  // cursor) and digests of the config and data. Written atomically (temp
  // file + rename). LoadCheckpoint refuses a checkpoint made with another
  // config or data (FailedPrecondition) or an unreadable one (DataLoss).
  absl::Status SaveCheckpoint(const std::string& path) const;
  absl::Status LoadCheckpoint(const std::string& path);

  const Normalization& normalization() const;

  // The network as artifact layers: Linear+ReLU, the last layer IDENTITY.
  std::vector<v1::DenseLayer> ExportLayers() const;

  // libtorch's forward pass on raw BuildState vectors ([n][state_dim],
  // normalised here the artifact's way): [n][outputs].
  std::vector<float> Forward(const std::vector<float>& raw_states) const;

  // Fitted Q evaluation of the greedy policy on `data` (e.g. the validation
  // split's transitions) with a separate Q network trained for
  // config.fqe.steps steps. FailedPrecondition when `data` is empty.
  absl::StatusOr<FqeResult> FittedQEvaluation(const TransitionSet& data) const;

 private:
  struct State;
  explicit Learner(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_LEARNER_H_
