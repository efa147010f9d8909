#ifndef PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_PIPELINE_H_
#define PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_PIPELINE_H_

// The steps of `phaseloop train` (train_command.h), in order:
//   LoadTrainingData -> TrainNetwork -> MeasurePolicy -> ExportPolicy
//   -> GateAndPublish.
// Each step reads the flags it needs and the results of the steps before it,
// and returns its own result or an error status whose message names the bad
// input (for command::ExitCodeOf: InvalidArgument/NotFound/... = bad input).
// Steps write progress lines ("phaseloop train: ...") to the `err` stream
// they are given and nothing else; the command formats the results.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/signing/keys.h"
#include "offline_rl/learner/canary_exploration.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/learner.h"
#include "offline_rl/learner/learner_config.h"
#include "offline_rl/learner/publish_gate.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::offline_rl {

// The inputs of one training run, as `phaseloop train`'s flags set them
// (train_command.cc declares the flags).
struct TrainFlags {
  std::string buffer;
  std::string config;
  std::string out;
  std::string candidates;  // overrides the config's candidates_file
  std::string checkpoint_dir;
  bool resume = false;
  int threads = 1;
  int64_t seed = -1;  // < 0: the config's
  std::string gate_corpus;
  std::string gate_against;
  std::string gate_split = "validation";  // "" = every module of the corpus
  // A runtime (speed) policy's gate: staging on this workload split
  // (staging_harness/staging/speed_gate.h) under gate_workloads_dir, built
  // with gate_cc; `ungated` writes it without one (for inspection).
  std::string gate_workloads;
  // Only these workloads of the split (names; empty = all of it): a short
  // gate, e.g. the closed loop's per-iteration one.
  std::vector<std::string> gate_workload_names;
  std::string gate_workloads_dir = "configs/workloads";
  std::string gate_cc;
  std::string gate_work_dir;
  double gate_budget_s = 120;
  // --gate-untimed: the speed gate checks outputs only (no timing); see
  // staging::SpeedGateOptions::timed.
  bool gate_untimed = false;
  std::string gate_object_cache;  // the speed gate builds' object cache
  bool ungated = false;
  // --explore-untried: a runtime policy whose choices on the service's code
  // canaries all judged tries one candidate none has
  // (offline_rl/learner/canary_exploration.h).
  bool explore_untried = false;
  // --explore-skip: pipelines an earlier exploration tried that never
  // reached a canary; not tried again.
  std::vector<std::string> explore_skip;
  // --stable-version: the stable policy's version, or "plain" for plain
  // clang ("" = unknown); with it, exploration happens only when the new
  // policy would build the service's code exactly like stable.
  std::string stable_version;
  bool json = false;
  // With single_abstain: the cross-fitted (out-of-fold) scores and measured
  // .text sizes of every training module, as JSON, for analysis.
  std::string crossfit_out;
  // --signing-key: the secret key file (common/signing/keys.h) the
  // published artifact is signed with; "" = unsigned.
  std::string signing_key;
  // The arguments after the program name, recorded in the artifact as the
  // exact training command ("phaseloop train <args>").
  std::vector<std::string> args;
};

struct TrainingData {
  LearnerConfig config;    // flags.config, with flags.seed applied
  DatasetOptions options;  // the LLVM 16 action space and the candidates
  Dataset data;            // both splits of the buffer
};

struct TrainedNetwork {
  std::unique_ptr<Learner> learner;  // refers to TrainingData::data
  double last_loss = 0;  // the last progress report's loss; 0 if none
};

struct PolicyMeasures {
  // train_*, validation_*, fqe_* and (single_abstain) crossfit_* figures.
  std::map<std::string, double> metrics;
  float single_abstain_margin = 0;  // 0: none
  // [candidates], true: never single's pick (empty: none excluded).
  std::vector<bool> single_excluded;
  // With --explore-untried: what the policy tries, or why it does not.
  std::optional<CanaryExploration> exploration;
};

struct ExportedPolicy {
  v1::PolicyArtifact artifact;
  std::string path;  // where it was written: flags.out, or a temp file
};

struct PublishOutcome {
  bool published = false;          // the artifact is at flags.out
  std::optional<GateResult> gate;  // absent without --gate-corpus
};

// Loads flags.config (flags.seed overrides its seed when >= 0), the
// candidates file (flags.candidates, else the config's; candidate
// formulation only), opens flags.buffer read-only and builds the dataset,
// then writes the "phaseloop train: <algorithm> ..." line to `err`. On
// failure returns the first error (it names the config, candidates file or
// buffer, or says why the data is unusable); nothing is written.
absl::StatusOr<TrainingData> LoadTrainingData(const TrainFlags& flags,
                                              std::ostream& err);

// Creates the learner on `training` (which must outlive the result and stay
// where it is: the learner refers to training.data) with
// flags.threads, creates flags.checkpoint_dir when set, resumes from its
// checkpoint.pt with flags.resume, and trains to config.optimizer.steps,
// writing a progress line per report to `err`. On failure returns the error
// (InvalidArgument naming --checkpoint-dir when it cannot be created); the
// checkpoint directory may then hold a partial run's checkpoint.
absl::StatusOr<TrainedNetwork> TrainNetwork(const TrainingData& training,
                                            const TrainFlags& flags,
                                            std::ostream& err);

// The trained network's figures: train_* and validation_* metrics, FQE on
// the validation transitions (config.fqe.steps > 0), and with
// config.single_abstain.folds > 0 the cross-fitted abstain margin (progress
// to `err`; flags.crossfit_out receives the out-of-fold table when set).
// On failure returns the error (InvalidArgument when single_abstain has no
// -Oz candidate; "--crossfit-out: ..." when that file cannot be written).
absl::StatusOr<PolicyMeasures> MeasurePolicy(const TrainingData& training,
                                             const TrainedNetwork& trained,
                                             const TrainFlags& flags,
                                             std::ostream& err);

// Builds the policy artifact (training command from flags.args; parent
// version from --gate-against when that is a readable artifact) and writes
// it atomically to flags.out, or, when a gate judges it first (the corpus
// gate with --gate-corpus; a speed policy's staging gate unless
// --ungated), to flags.out + ".gate.tmp" for GateAndPublish, so --out
// keeps its policy until the new one wins. On failure returns the error and
// neither path holds a new file.
//
// Signing (--signing-key, loaded by the caller into `signing_key`): the
// detached signature (common/signing/signature.h) is written beside the
// artifact where it is written (the speed gate stages it through the
// wrapper, which may require one) and beside flags.out just before the
// artifact reaches it, here or in GateAndPublish; without a key a stale
// signature there is removed, so an artifact is never left beside another
// artifact's signature.
absl::StatusOr<ExportedPolicy> ExportPolicy(
    const TrainingData& training, const TrainedNetwork& trained,
    const PolicyMeasures& measures, const TrainFlags& flags,
    const signing::SigningKey* signing_key = nullptr);

// Without --gate-corpus: nothing to do (ExportPolicy wrote flags.out), so
// published. With it: runs the publish gate on exported.path against
// flags.gate_against; when the new policy wins, renames exported.path over
// flags.out (published); when it loses, removes exported.path and leaves
// flags.out untouched (not published; `gate` says why). On failure (the gate
// could not run, or the rename failed) returns the error, exported.path is
// removed and flags.out untouched.
absl::StatusOr<PublishOutcome> GateAndPublish(
    const ExportedPolicy& exported, const LearnerConfig& config,
    const TrainFlags& flags, const signing::SigningKey* signing_key = nullptr);

}  // namespace phaseloop::offline_rl

#endif  // PHASELOOP_OFFLINE_RL_LEARNER_TRAIN_PIPELINE_H_
