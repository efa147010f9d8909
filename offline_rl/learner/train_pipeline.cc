#include "offline_rl/learner/train_pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <ostream>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files/atomic_file.h"
#include "common/process/stop_signals.h"
#include "common/signing/signature.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/abstain_margin.h"
#include "offline_rl/learner/cross_fit.h"
#include "offline_rl/learner/gate_metrics.h"
#include "offline_rl/learner/policy_export.h"
#include "offline_rl/learner/policy_scores.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/staging/speed_gate.h"

namespace phaseloop::offline_rl {
namespace {

// Shell-quotes an argument when it needs it, so the recorded command can be
// pasted back into a shell.
std::string Quote(const std::string& arg) {
  if (!arg.empty() &&
      arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                            "VWXYZ0123456789-_./=:,+@%") == std::string::npos) {
    return arg;
  }
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string TrainingCommand(const std::vector<std::string>& args) {
  std::vector<std::string> quoted = {"phaseloop", "train"};
  for (const std::string& a : args) quoted.push_back(Quote(a));
  return absl::StrJoin(quoted, " ");
}

// The LLVM 16 action space's pass names and version, and the candidates file
// (flags.candidates, else the config's) for the candidate formulation.
absl::StatusOr<DatasetOptions> DatasetOptionsFor(const LearnerConfig& config,
                                                 const TrainFlags& flags) {
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  DatasetOptions options;
  options.action_space_version = space.version();
  for (const passes::Action& a : space.actions()) {
    options.pass_names.push_back(a.name);
    options.pass_pipelines.push_back(a.pipeline);
  }
  const std::string candidates_file =
      flags.candidates.empty() ? config.candidates_file : flags.candidates;
  if (config.formulation == "candidate" && !candidates_file.empty()) {
    auto candidates = ReadCandidatesFile(candidates_file, options.pass_names,
                                         config.objective);
    if (!candidates.ok()) return candidates.status();
    options.candidates = *std::move(candidates);
  }
  if (!flags.stable_version.empty()) {
    options.stable_version =
        flags.stable_version == "plain" ? "" : flags.stable_version;
  }
  return options;
}

// One progress line of Learner::Train: step, loss (td and cql for cql) and
// transitions/s.
void PrintProgress(const TrainProgress& p, int64_t steps, bool cql,
                   std::ostream& err) {
  char line[200];
  std::snprintf(line, sizeof line, "step %7lld/%lld  loss %.5f  ",
                static_cast<long long>(p.step), static_cast<long long>(steps),
                p.loss);
  err << line;
  if (cql) {
    std::snprintf(line, sizeof line, "td %.5f  cql %.5f  ", p.td_loss,
                  p.cql_penalty);
    err << line;
  }
  std::snprintf(line, sizeof line, "%.0f transitions/s\n",
                p.transitions_per_second);
  err << line << std::flush;
}

// Validation figures with libtorch's forward pass.
void AddValidationMetrics(const Dataset& data, const Learner& learner,
                          std::map<std::string, double>* metrics) {
  const SplitData& v = data.validation;
  if (data.formulation == "candidate") {
    if (v.table.module_hashes.empty()) return;
    int oz = -1;
    for (size_t c = 0; c < data.candidates.size(); ++c) {
      if (data.candidates[c].name == "oz") oz = static_cast<int>(c);
    }
    const CandidateScore s =
        ScoreCandidateChoices(v.table, static_cast<int>(data.candidates.size()),
                              learner.Forward(v.table.start_states), oz);
    (*metrics)["validation_modules"] = s.modules;
    (*metrics)["validation_mean_value"] = s.mean_value;
    (*metrics)["validation_oracle_value"] = s.oracle_value;
    if (oz >= 0) (*metrics)["validation_oz_value"] = s.baseline_value;
    (*metrics)["validation_best_choice_rate"] = s.best_choice_rate;
    (*metrics)["validation_unmeasured_choices"] = s.unmeasured_choices;
  } else if (v.demonstrations.size() > 0) {
    (*metrics)["validation_demonstrations"] = v.demonstrations.size();
    (*metrics)["validation_action_agreement"] = ActionAgreement(
        v.demonstrations, learner.Forward(v.demonstrations.states));
  }
}

// The index of the -Oz candidate (pipeline default<Oz>); -1 if none.
int OzCandidate(const Dataset& data) {
  for (size_t c = 0; c < data.candidates.size(); ++c) {
    if (data.candidates[c].pipeline == policy_runtime::kOzPipeline) {
      return static_cast<int>(c);
    }
  }
  return -1;
}

// The cross-fitted score table as JSON: {"candidates": [names], "modules":
// [{"module_hash", "scores": [..], "object_sizes": [.. or null]}]}.
absl::Status WriteCrossFitTable(const std::string& path, const Dataset& data,
                                const std::vector<float>& scores) {
  const CandidateTable& t = data.train.table;
  const size_t k = data.candidates.size();
  nlohmann::json j;
  j["candidates"] = nlohmann::json::array();
  for (const Candidate& c : data.candidates) j["candidates"].push_back(c.name);
  j["modules"] = nlohmann::json::array();
  for (size_t m = 0; m < t.module_hashes.size(); ++m) {
    nlohmann::json row = {{"module_hash", t.module_hashes[m]}};
    row["scores"] = std::vector<float>(scores.begin() + m * k,
                                       scores.begin() + (m + 1) * k);
    nlohmann::json sizes = nlohmann::json::array();
    for (size_t c = 0; c < k; ++c) {
      const double v = t.object_sizes[m * k + c];
      sizes.push_back(std::isnan(v) ? nlohmann::json(nullptr)
                                    : nlohmann::json(v));
    }
    row["object_sizes"] = std::move(sizes);
    j["modules"].push_back(std::move(row));
  }
  absl::Status written = files::WriteFileAtomically(
      path,
      j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (written.ok()) return written;
  return absl::Status(written.code(),
                      absl::StrCat("--crossfit-out: ", written.message()));
}

// single mode's abstain margin (config.single_abstain): cross-fitted scores
// of the training modules choose it; the figures go into `metrics`, and the
// margin applied to the final network's validation scores too.
absl::StatusOr<float> LearnAbstainMargin(const LearnerConfig& config,
                                         const Dataset& data,
                                         const Learner& learner, int threads,
                                         const std::string& crossfit_out,
                                         std::map<std::string, double>* metrics,
                                         std::vector<bool>* excluded,
                                         std::ostream& err) {
  const AbstainConfig& a = config.single_abstain;
  const int oz = OzCandidate(data);
  if (oz < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "single_abstain needs the -Oz candidate (pipeline ",
        policy_runtime::kOzPipeline,
        ") in the candidates file; `phaseloop candidates mine` always writes "
        "it, or set single_abstain.folds: 0"));
  }
  const int k = static_cast<int>(data.candidates.size());
  err << "phaseloop train: cross-fitting the single-mode abstain margin ("
      << a.folds << " folds of " << data.train.table.module_hashes.size()
      << " training modules)\n";
  auto scores = CrossFitScores(config, data, a.folds, threads, [&](int f) {
    err << "phaseloop train:   fold " << f + 1 << "/" << a.folds << " scored\n"
        << std::flush;
  });
  if (!scores.ok()) return scores.status();
  if (!crossfit_out.empty()) {
    absl::Status written = WriteCrossFitTable(crossfit_out, data, *scores);
    if (!written.ok()) return written;
  }
  // Candidates single may not take unmeasured: the artifact's from every
  // training module's measurements; for the margin, each module's from the
  // other folds' modules, so the held-out figures stay held out.
  const CandidateTable& table = data.train.table;
  *excluded = SingleExcludedCandidates(table, k, oz, a.tolerance,
                                       a.candidate_max_over_modules);
  std::vector<std::vector<bool>> held_out_excluded;
  if (a.candidate_max_over_modules >= 0) {
    const int modules = static_cast<int>(table.module_hashes.size());
    const std::vector<int> fold_of =
        CrossFitFolds(config.seed, modules, a.folds);
    std::vector<std::vector<bool>> per_fold;
    for (int f = 0; f < a.folds; ++f) {
      std::vector<bool> others(modules);
      for (int m = 0; m < modules; ++m) others[m] = fold_of[m] != f;
      per_fold.push_back(SingleExcludedCandidates(
          table, k, oz, a.tolerance, a.candidate_max_over_modules, others));
    }
    for (int m = 0; m < modules; ++m) {
      held_out_excluded.push_back(per_fold[fold_of[m]]);
    }
    const int excluded_count =
        static_cast<int>(std::count(excluded->begin(), excluded->end(), true));
    (*metrics)["single_excluded_candidates"] = excluded_count;
    err << "phaseloop train: single mode: " << excluded_count << " of " << k
        << " candidates excluded (more than " << 100 * a.tolerance
        << " % larger than -Oz on more than " << a.candidate_max_over_modules
        << " training modules)\n";
  }
  auto choice = ChooseAbstainMargin(table, k, *scores, oz, a.tolerance,
                                    a.max_over_modules, held_out_excluded);
  if (!choice.ok()) return choice.status();
  const AbstainPoint& never = choice->curve.front();
  const AbstainPoint& chosen = choice->chosen;
  (*metrics)["single_abstain_margin"] = chosen.margin;
  (*metrics)["crossfit_modules"] = chosen.modules;
  // alloc_oz_ratio for an alloc_size policy, text_oz_ratio for the first
  // generation's text_size ones (the sizes the table holds).
  const std::string ratio =
      config.objective == "alloc_size" ? "alloc_oz_ratio" : "text_oz_ratio";
  (*metrics)["crossfit_" + ratio] = chosen.size_oz_ratio;
  (*metrics)["crossfit_over_tolerance"] = chosen.over_tolerance;
  (*metrics)["crossfit_worst_excess"] = chosen.worst_excess;
  (*metrics)["crossfit_switched"] = chosen.switched;
  (*metrics)["crossfit_no_abstain_" + ratio] = never.size_oz_ratio;
  (*metrics)["crossfit_no_abstain_over_tolerance"] = never.over_tolerance;
  char line[240];
  std::snprintf(line, sizeof line,
                "phaseloop train: margin %.4g: held-out %s %.4f, "
                "%d of %d modules off -Oz, %d over %.1f%% (worst %+.2f%%); "
                "without it %.4f, %d over\n",
                chosen.margin, ratio.c_str(), chosen.size_oz_ratio,
                chosen.switched, chosen.modules, chosen.over_tolerance,
                100 * a.tolerance, 100 * chosen.worst_excess,
                never.size_oz_ratio, never.over_tolerance);
  err << line;
  const CandidateTable& v = data.validation.table;
  if (!v.module_hashes.empty() &&
      v.object_sizes.size() == v.module_hashes.size() * k) {
    const AbstainPoint at = ScoreAbstainMargin(
        v, k, learner.Forward(v.start_states), oz, chosen.margin, a.tolerance,
        std::vector<std::vector<bool>>(v.module_hashes.size(), *excluded));
    (*metrics)["validation_single_" + ratio] = at.size_oz_ratio;
    (*metrics)["validation_single_over_tolerance"] = at.over_tolerance;
    (*metrics)["validation_single_worst_excess"] = at.worst_excess;
  }
  return static_cast<float>(chosen.margin);
}

staging::SpeedGateOptions SpeedGateOptionsOf(const TrainFlags& flags) {
  staging::SpeedGateOptions options;
  options.split = flags.gate_workloads;
  options.names = flags.gate_workload_names;
  options.workloads_dir = flags.gate_workloads_dir;
  options.cc = flags.gate_cc;
  options.work_dir = flags.gate_work_dir;
  options.budget_s = flags.gate_budget_s;
  options.timed = !flags.gate_untimed;
  options.object_cache_dir = flags.gate_object_cache;
  return options;
}

}  // namespace

absl::StatusOr<TrainingData> LoadTrainingData(const TrainFlags& flags,
                                              std::ostream& err) {
  auto config = LoadLearnerConfig(flags.config);
  if (!config.ok()) return config.status();
  if (flags.seed >= 0) config->seed = static_cast<uint64_t>(flags.seed);
  const bool runtime = config->policy_objective == kObjectiveRuntime;
  if (runtime && flags.gate_workloads.empty() && !flags.ungated) {
    return absl::InvalidArgumentError(absl::StrCat(
        flags.config,
        ": a speed policy is published only through its gate: give "
        "--gate-workloads test (staging on the held-out workloads, none "
        "slower) or --ungated to write it for inspection"));
  }
  if (runtime && !flags.ungated) {
    // Before training: a gate that cannot run would waste it.
    if (absl::Status gate = staging::CheckSpeedGate(SpeedGateOptionsOf(flags));
        !gate.ok()) {
      return gate;
    }
  }
  if (!runtime && flags.explore_untried) {
    return absl::InvalidArgumentError(absl::StrCat(
        flags.config,
        ": --explore-untried is for speed policies (objective runtime), "
        "which canaries judge; a ",
        config->policy_objective, " policy is judged on a corpus"));
  }
  if (!runtime && (!flags.gate_workloads.empty() || flags.ungated)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flags.config,
        ": --gate-workloads and --ungated are for speed "
        "policies; a ",
        config->policy_objective, " policy's gate is --gate-corpus"));
  }
  auto options = DatasetOptionsFor(*config, flags);
  if (!options.ok()) return options.status();

  replay_buffer::OpenOptions open;
  open.create = false;
  open.read_only = true;
  auto store = replay_buffer::OpenReplayStore(flags.buffer, open);
  if (!store.ok()) return store.status();
  auto data = BuildDataset(**store, *config, *options);
  if (!data.ok()) return data.status();
  err << "phaseloop train: " << config->algorithm << " " << config->formulation
      << " " << config->objective << "; " << data->snapshot << "\n";
  return TrainingData{*std::move(config), *std::move(options),
                      *std::move(data)};
}

absl::StatusOr<TrainedNetwork> TrainNetwork(const TrainingData& training,
                                            const TrainFlags& flags,
                                            std::ostream& err) {
  const LearnerConfig& config = training.config;
  auto learner = Learner::Create(config, training.data, flags.threads);
  if (!learner.ok()) return learner.status();
  std::string checkpoint;
  if (!flags.checkpoint_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(flags.checkpoint_dir, error);
    if (error) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot create --checkpoint-dir ", flags.checkpoint_dir,
                       ": ", error.message()));
    }
    checkpoint = (std::filesystem::path(flags.checkpoint_dir) / "checkpoint.pt")
                     .string();
  }
  if (flags.resume) {
    absl::Status loaded = (*learner)->LoadCheckpoint(checkpoint);
    if (!loaded.ok()) return loaded;
    err << "phaseloop train: resumed at step " << (*learner)->step() << "\n";
  }
  TrainedNetwork trained{*std::move(learner)};
  const int64_t steps = config.optimizer.steps;
  const bool cql = config.algorithm == "cql";
  absl::Status done =
      trained.learner->Train(steps, checkpoint, [&](const TrainProgress& p) {
        trained.last_loss = p.loss;
        PrintProgress(p, steps, cql, err);
      });
  if (!done.ok()) return done;
  return trained;
}

absl::StatusOr<PolicyMeasures> MeasurePolicy(const TrainingData& training,
                                             const TrainedNetwork& trained,
                                             const TrainFlags& flags,
                                             std::ostream& err) {
  const LearnerConfig& config = training.config;
  const Dataset& data = training.data;
  const Learner& learner = *trained.learner;
  PolicyMeasures measures;
  std::map<std::string, double>& metrics = measures.metrics;
  metrics["train_steps"] = static_cast<double>(learner.step());
  metrics["train_final_loss"] = trained.last_loss;
  metrics["train_transitions"] = data.train.transitions.size();
  metrics["train_demonstrations"] = data.train.demonstrations.size();
  if (data.train.canary_runs > 0) {
    // Production's word in this policy: canary runs it learned from.
    metrics["train_canary_runs"] = data.train.canary_runs;
    metrics["train_canary_decisions"] = data.train.canary_decisions;
  }
  if (data.train.topk_rows > 0) {
    // The user's own builds in this size policy (topk_outcomes.h).
    metrics["train_topk_modules"] = data.train.topk_rows;
    metrics["train_topk_decisions"] = data.train.topk_decisions;
  }
  AddValidationMetrics(data, learner, &metrics);
  if (config.fqe.steps > 0 && data.validation.transitions.size() == 0) {
    err << "train: fitted Q evaluation skipped: the validation split '"
        << config.validation_split << "' has no transitions\n";
  }
  if (config.fqe.steps > 0 && data.validation.transitions.size() > 0) {
    auto fqe = learner.FittedQEvaluation(data.validation.transitions);
    if (!fqe.ok()) return fqe.status();
    metrics["fqe_policy_value"] = fqe->policy_value;
    metrics["fqe_logged_value"] = fqe->logged_value;
    metrics["fqe_final_loss"] = fqe->final_loss;
  }
  if (config.single_abstain.folds > 0) {
    auto margin = LearnAbstainMargin(config, data, learner, flags.threads,
                                     flags.crossfit_out, &metrics,
                                     &measures.single_excluded, err);
    if (!margin.ok()) return margin.status();
    measures.single_abstain_margin = *margin;
  }
  if (flags.explore_untried) {
    int baseline = -1;
    for (size_t c = 0; c < data.candidates.size(); ++c) {
      if (data.candidates[c].pipeline == kRuntimeBaselinePipeline) {
        baseline = static_cast<int>(c);
      }
    }
    CanaryExploration exploration = ChooseCanaryExploration(
        data,
        [&](const std::vector<float>& states) {
          return learner.Forward(states);
        },
        baseline, config.reward_scale,
        std::set<std::string>(flags.explore_skip.begin(),
                              flags.explore_skip.end()));
    err << "phaseloop train: exploration: " << exploration.reason << "\n";
    if (exploration.exploring) {
      metrics["explore_candidate"] = exploration.candidate;
      metrics["explore_bias"] = exploration.bias / config.reward_scale;
    }
    measures.exploration = std::move(exploration);
  }
  return measures;
}

namespace {

// Writes (with a key) or removes (without) the detached signature beside
// `out`, before `artifact` itself is put there.
absl::Status PlaceSignature(const v1::PolicyArtifact& artifact,
                            const std::string& out,
                            const signing::SigningKey* signing_key) {
  const std::string path = signing::SignaturePathFor(out);
  if (signing_key == nullptr) {
    std::error_code error;
    std::filesystem::remove(path, error);
    if (error) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot remove the stale signature ", path, ": ", error.message()));
    }
    return absl::OkStatus();
  }
  return files::WriteFileAtomically(
      path,
      signing::SignArtifact(
          policy_runtime::SerializePolicyArtifactFile(artifact), *signing_key));
}

}  // namespace

absl::StatusOr<ExportedPolicy> ExportPolicy(
    const TrainingData& training, const TrainedNetwork& trained,
    const PolicyMeasures& measures, const TrainFlags& flags,
    const signing::SigningKey* signing_key) {
  ExportInputs inputs;
  inputs.single_abstain_margin = measures.single_abstain_margin;
  inputs.single_excluded = measures.single_excluded;
  inputs.config = &training.config;
  inputs.data = &training.data;
  inputs.pass_names = training.options.pass_names;
  inputs.normalization = trained.learner->normalization();
  inputs.layers = trained.learner->ExportLayers();
  if (measures.exploration && measures.exploration->exploring) {
    AddOutputBias(measures.exploration->candidate, measures.exploration->bias,
                  &inputs.layers);
  }
  inputs.training_command = TrainingCommand(flags.args);
  inputs.metrics = measures.metrics;
  if (!flags.gate_against.empty()) {
    auto current = policy_runtime::ReadPolicyArtifactFile(flags.gate_against);
    if (current.ok()) {
      inputs.parent_version = policy_runtime::PolicyVersionOf(*current);
    }
  }
  auto artifact = BuildPolicyArtifact(inputs);
  if (!artifact.ok()) return artifact.status();
  // With a gate (the corpus gate, or a speed policy's staging gate), the
  // artifact is evaluated from a temporary file beside --out and renamed
  // into place only when it wins: --out keeps the policy it held until then
  // (a refused gate, or a run stopped while staging, left it deleted or
  // replaced by an ungated one).
  const bool gated = training.config.policy_objective == kObjectiveRuntime
                         ? !flags.ungated
                         : !flags.gate_corpus.empty();
  ExportedPolicy exported;
  exported.artifact = *std::move(artifact);
  exported.path = gated ? flags.out + ".gate.tmp" : flags.out;
  // Signed where it is evaluated too: a speed gate stages it through the
  // wrapper, which refuses an unsigned artifact when a trust file is set.
  absl::Status placed =
      PlaceSignature(exported.artifact, exported.path, signing_key);
  if (!placed.ok()) return placed;
  absl::Status written =
      policy_runtime::WritePolicyArtifactFile(exported.artifact, exported.path);
  if (!written.ok()) return written;
  return exported;
}

namespace {

// A speed policy's gate: staging on the held-out workloads, none slower
// (staging_harness/staging/speed_gate.h), as the corpus gate's figures:
// geomean speedup against -O3 (1).
absl::StatusOr<GateResult> RunSpeedPublishGate(const std::string& path,
                                               const TrainFlags& flags) {
  // The gate runs workloads in process groups of their own: a train stopped
  // now (the loop sends SIGTERM) stops them too, and --out is left as it
  // was (the artifact waits beside it).
  process::KillChildrenOnStopSignals();
  absl::StatusOr<staging::SpeedGateResult> speed = staging::RunSpeedGate(
      absl::StrCat("artifact:", path), SpeedGateOptionsOf(flags), std::cerr);
  if (!speed.ok()) return speed.status();
  GateResult gate;
  gate.passed = speed->passed;
  // An untimed gate says so in its metric: its geomean is 1 by
  // construction, not a measurement.
  gate.metric = flags.gate_untimed ? kGateMetricSpeedOutputsOnly
                                   : kGateMetricSpeedGeomean;
  gate.candidate_score = speed->geomean_speedup;
  gate.current_score = 1;
  gate.modules = speed->workloads;
  gate.candidate_failed = speed->slower + speed->miscompiled + speed->unusable;
  gate.report = staging::FormatSpeedGate(*speed);
  return gate;
}

}  // namespace

absl::StatusOr<PublishOutcome> GateAndPublish(
    const ExportedPolicy& exported, const LearnerConfig& config,
    const TrainFlags& flags, const signing::SigningKey* signing_key) {
  PublishOutcome outcome;
  const bool runtime = config.policy_objective == kObjectiveRuntime;
  if (runtime ? flags.ungated : flags.gate_corpus.empty()) {
    outcome.published = true;
    return outcome;
  }
  absl::StatusOr<GateResult> result;
  if (runtime) {
    result = RunSpeedPublishGate(exported.path, flags);
  } else {
    GateOptions gate;
    gate.corpus_dir = flags.gate_corpus;
    gate.current_policy = flags.gate_against;
    gate.threads = flags.threads;
    gate.split = flags.gate_split;
    result = RunPublishGate(exported.path, config.policy_objective, gate);
  }
  std::error_code ignored;
  auto remove_refused = [&] {
    std::filesystem::remove(exported.path, ignored);
    std::filesystem::remove(signing::SignaturePathFor(exported.path), ignored);
  };
  if (!result.ok()) {
    remove_refused();
    return result.status();
  }
  outcome.gate = *result;
  if (!result->passed) {
    remove_refused();
    return outcome;
  }
  if (exported.path != flags.out) {
    absl::Status placed =
        PlaceSignature(exported.artifact, flags.out, signing_key);
    if (!placed.ok()) {
      std::filesystem::remove(exported.path, ignored);
      return placed;
    }
  }
  absl::Status moved = files::CommitFile(exported.path, flags.out);
  if (!moved.ok()) return moved;
  std::filesystem::remove(signing::SignaturePathFor(exported.path), ignored);
  outcome.published = true;
  return outcome;
}

}  // namespace phaseloop::offline_rl
