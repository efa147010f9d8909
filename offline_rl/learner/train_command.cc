#include "offline_rl/learner/train_command.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/command/exit_code.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/abstain_margin.h"
#include "offline_rl/learner/cross_fit.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/learner.h"
#include "offline_rl/learner/learner_config.h"
#include "offline_rl/learner/policy_export.h"
#include "offline_rl/learner/policy_scores.h"
#include "offline_rl/learner/publish_gate.h"
#include "common/files/atomic_file.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::offline_rl {
namespace {

constexpr int kGateRefused = 3;

int Fail(const absl::Status& status, std::ostream& err) {
  err << "phaseloop train: " << status.message() << "\n";
  return command::ExitCodeOf(status);
}

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
    const CandidateScore s = ScoreCandidateChoices(
        v.table, static_cast<int>(data.candidates.size()),
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
// [{"module_hash", "scores": [..], "text_sizes": [.. or null]}]}.
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
      const double v = t.text_sizes[m * k + c];
      sizes.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
    }
    row["text_sizes"] = std::move(sizes);
    j["modules"].push_back(std::move(row));
  }
  absl::Status written =
      files::WriteFileAtomically(path, j.dump() + "\n");
  if (written.ok()) return written;
  return absl::Status(written.code(),
                      absl::StrCat("--crossfit-out: ", written.message()));
}

// single mode's abstain margin (config.single_abstain): cross-fitted scores
// of the training modules choose it; the figures go into `metrics`, and the
// margin applied to the final network's validation scores too.
absl::StatusOr<float> LearnAbstainMargin(
    const LearnerConfig& config, const Dataset& data, const Learner& learner,
    int threads, const std::string& crossfit_out,
    std::map<std::string, double>* metrics, std::ostream& err) {
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
    err << "phaseloop train:   fold " << f + 1 << "/" << a.folds
        << " scored\n" << std::flush;
  });
  if (!scores.ok()) return scores.status();
  if (!crossfit_out.empty()) {
    absl::Status written = WriteCrossFitTable(crossfit_out, data, *scores);
    if (!written.ok()) return written;
  }
  auto choice = ChooseAbstainMargin(data.train.table, k, *scores, oz,
                                    a.tolerance, a.max_over_modules);
  if (!choice.ok()) return choice.status();
  const AbstainPoint& never = choice->curve.front();
  const AbstainPoint& chosen = choice->chosen;
  (*metrics)["single_abstain_margin"] = chosen.margin;
  (*metrics)["crossfit_modules"] = chosen.modules;
  (*metrics)["crossfit_text_oz_ratio"] = chosen.text_oz_ratio;
  (*metrics)["crossfit_over_tolerance"] = chosen.over_tolerance;
  (*metrics)["crossfit_worst_excess"] = chosen.worst_excess;
  (*metrics)["crossfit_switched"] = chosen.switched;
  (*metrics)["crossfit_no_abstain_text_oz_ratio"] = never.text_oz_ratio;
  (*metrics)["crossfit_no_abstain_over_tolerance"] = never.over_tolerance;
  char line[240];
  std::snprintf(line, sizeof line,
                "phaseloop train: margin %.4g: held-out text_oz_ratio %.4f, "
                "%d of %d modules off -Oz, %d over %.1f%% (worst %+.2f%%); "
                "without it %.4f, %d over\n",
                chosen.margin, chosen.text_oz_ratio, chosen.switched,
                chosen.modules, chosen.over_tolerance, 100 * a.tolerance,
                100 * chosen.worst_excess, never.text_oz_ratio,
                never.over_tolerance);
  err << line;
  const CandidateTable& v = data.validation.table;
  if (!v.module_hashes.empty() &&
      v.text_sizes.size() == v.module_hashes.size() * k) {
    const AbstainPoint at =
        ScoreAbstainMargin(v, k, learner.Forward(v.start_states), oz,
                           chosen.margin, a.tolerance);
    (*metrics)["validation_single_text_oz_ratio"] = at.text_oz_ratio;
    (*metrics)["validation_single_over_tolerance"] = at.over_tolerance;
    (*metrics)["validation_single_worst_excess"] = at.worst_excess;
  }
  return static_cast<float>(chosen.margin);
}

}  // namespace

void AddTrainFlags(CLI::App& app, TrainFlags& flags) {
  app.add_option("--buffer", flags.buffer, "replay buffer (SQLite file)")
      ->required();
  app.add_option("--config", flags.config,
                 "learner config (YAML, e.g. configs/learner/"
                 "size_candidate_cql.yaml)")
      ->required();
  app.add_option("--out", flags.out, "policy artifact to write (.plpolicy)")
      ->required();
  app.add_option("--candidates", flags.candidates,
                 "candidates file (JSON from `phaseloop candidates mine`); "
                 "overrides the config's candidates_file");
  app.add_option("--checkpoint-dir", flags.checkpoint_dir,
                 "directory for checkpoint.pt (written every "
                 "checkpoint_every steps, atomically)");
  app.add_flag("--resume", flags.resume,
               "continue from --checkpoint-dir's checkpoint exactly");
  app.add_option("--threads", flags.threads, "libtorch threads (fix it for "
                                             "bit-identical weights)")
      ->check(CLI::Range(1, 256));
  app.add_option("--seed", flags.seed, "overrides the config's seed")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--gate-corpus", flags.gate_corpus,
                 "publish only if the new policy beats --gate-against on "
                 "this corpus's validation split");
  app.add_option("--gate-against", flags.gate_against,
                 "the current policy the new one must beat");
  app.add_option("--gate-split", flags.gate_split,
                 "the corpus split the gate evaluates (\"\" = all)")
      ->capture_default_str();
  app.add_flag("--json", flags.json, "machine-readable summary");
  app.add_option("--crossfit-out", flags.crossfit_out,
                 "with single_abstain: write the cross-fitted scores and "
                 "measured .text sizes of the training modules (JSON)");
}

int RunTrain(const TrainFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.gate_corpus.empty() != flags.gate_against.empty()) {
    return Fail(absl::InvalidArgumentError(
                    "--gate-corpus and --gate-against go together"),
                err);
  }
  if (flags.resume && flags.checkpoint_dir.empty()) {
    return Fail(absl::InvalidArgumentError(
                    "--resume needs --checkpoint-dir (where the checkpoint is)"),
                err);
  }
  auto config = LoadLearnerConfig(flags.config);
  if (!config.ok()) return Fail(config.status(), err);
  if (flags.seed >= 0) config->seed = static_cast<uint64_t>(flags.seed);

  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  DatasetOptions options;
  options.action_space_version = space.version();
  for (const passes::Action& a : space.actions()) {
    options.pass_names.push_back(a.name);
  }
  const std::string candidates_file =
      flags.candidates.empty() ? config->candidates_file : flags.candidates;
  if (config->formulation == "candidate" && !candidates_file.empty()) {
    auto candidates = ReadCandidatesFile(candidates_file, options.pass_names);
    if (!candidates.ok()) return Fail(candidates.status(), err);
    options.candidates = *std::move(candidates);
  }

  replay_buffer::OpenOptions open;
  open.create = false;
  open.read_only = true;
  auto store = replay_buffer::OpenReplayStore(flags.buffer, open);
  if (!store.ok()) return Fail(store.status(), err);
  auto data = BuildDataset(**store, *config, options);
  if (!data.ok()) return Fail(data.status(), err);
  err << "phaseloop train: " << config->algorithm << " "
      << config->formulation << " " << config->objective << "; "
      << data->snapshot << "\n";

  auto learner = Learner::Create(*config, *data, flags.threads);
  if (!learner.ok()) return Fail(learner.status(), err);
  std::string checkpoint;
  if (!flags.checkpoint_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(flags.checkpoint_dir, error);
    if (error) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
                      "cannot create --checkpoint-dir ", flags.checkpoint_dir,
                      ": ", error.message())),
                  err);
    }
    checkpoint = (std::filesystem::path(flags.checkpoint_dir) /
                  "checkpoint.pt").string();
  }
  if (flags.resume) {
    absl::Status loaded = (*learner)->LoadCheckpoint(checkpoint);
    if (!loaded.ok()) return Fail(loaded, err);
    err << "phaseloop train: resumed at step " << (*learner)->step() << "\n";
  }
  const int64_t steps = config->optimizer.steps;
  double last_loss = 0;
  absl::Status trained = (*learner)->Train(
      steps, checkpoint, [&](const TrainProgress& p) {
        last_loss = p.loss;
        char line[200];
        std::snprintf(line, sizeof line, "step %7lld/%lld  loss %.5f  ",
                      static_cast<long long>(p.step),
                      static_cast<long long>(steps), p.loss);
        err << line;
        if (config->algorithm == "cql") {
          std::snprintf(line, sizeof line, "td %.5f  cql %.5f  ", p.td_loss,
                        p.cql_penalty);
          err << line;
        }
        std::snprintf(line, sizeof line, "%.0f transitions/s\n",
                      p.transitions_per_second);
        err << line << std::flush;
      });
  if (!trained.ok()) return Fail(trained, err);

  std::map<std::string, double> metrics;
  metrics["train_steps"] = static_cast<double>((*learner)->step());
  metrics["train_final_loss"] = last_loss;
  metrics["train_transitions"] = data->train.transitions.size();
  metrics["train_demonstrations"] = data->train.demonstrations.size();
  AddValidationMetrics(*data, **learner, &metrics);
  if (config->fqe.steps > 0 && data->validation.transitions.size() > 0) {
    auto fqe = (*learner)->FittedQEvaluation(data->validation.transitions);
    if (!fqe.ok()) return Fail(fqe.status(), err);
    metrics["fqe_policy_value"] = fqe->policy_value;
    metrics["fqe_logged_value"] = fqe->logged_value;
    metrics["fqe_final_loss"] = fqe->final_loss;
  }

  float abstain_margin = 0;
  if (config->single_abstain.folds > 0) {
    auto margin = LearnAbstainMargin(*config, *data, **learner, flags.threads,
                                     flags.crossfit_out, &metrics, err);
    if (!margin.ok()) return Fail(margin.status(), err);
    abstain_margin = *margin;
  }

  ExportInputs inputs;
  inputs.single_abstain_margin = abstain_margin;
  inputs.config = &*config;
  inputs.data = &*data;
  inputs.pass_names = options.pass_names;
  inputs.normalization = (*learner)->normalization();
  inputs.layers = (*learner)->ExportLayers();
  inputs.training_command = TrainingCommand(flags.args);
  inputs.metrics = metrics;
  if (!flags.gate_against.empty()) {
    auto current = policy_runtime::ReadPolicyArtifactFile(flags.gate_against);
    if (current.ok()) {
      inputs.parent_version = policy_runtime::PolicyVersionOf(*current);
    }
  }
  auto artifact = BuildPolicyArtifact(inputs);
  if (!artifact.ok()) return Fail(artifact.status(), err);

  // With a gate, the artifact is evaluated from a temporary file beside
  // --out and renamed into place only when it wins.
  const std::string write_path =
      flags.gate_corpus.empty() ? flags.out : flags.out + ".gate.tmp";
  absl::Status written =
      policy_runtime::WritePolicyArtifactFile(*artifact, write_path);
  if (!written.ok()) return Fail(written, err);
  nlohmann::json gate_json;
  if (!flags.gate_corpus.empty()) {
    GateOptions gate;
    gate.corpus_dir = flags.gate_corpus;
    gate.current_policy = flags.gate_against;
    gate.threads = flags.threads;
    gate.split = flags.gate_split;
    auto result = RunPublishGate(write_path, config->policy_objective, gate);
    if (!result.ok()) {
      std::filesystem::remove(write_path);
      return Fail(result.status(), err);
    }
    gate_json = {{"passed", result->passed},
                 {"metric", result->metric},
                 {"new", result->candidate_score},
                 {"current", result->current_score},
                 {"modules", result->modules},
                 {"new_failed_modules", result->candidate_failed}};
    if (!result->passed) {
      std::filesystem::remove(write_path);
      err << "phaseloop train: not published: the new policy's "
          << result->metric << " " << result->candidate_score
          << " does not beat the current policy's " << result->current_score
          << " on " << result->modules << " validation modules ("
          << result->candidate_failed << " failed); " << flags.out
          << " left untouched\n";
      if (flags.json) out << nlohmann::json({{"gate", gate_json}}).dump(2) << "\n";
      return kGateRefused;
    }
    if (absl::Status moved = files::CommitFile(write_path, flags.out);
        !moved.ok()) {
      return Fail(moved, err);
    }
  }

  const std::string version = policy_runtime::PolicyVersionOf(*artifact);
  if (flags.json) {
    nlohmann::json j = {{"out", flags.out},
                        {"policy_version", version},
                        {"objective", artifact->objective()},
                        {"formulation", artifact->formulation()},
                        {"algorithm", config->algorithm},
                        {"seed", config->seed},
                        {"data_snapshot", data->snapshot},
                        {"training_command", inputs.training_command},
                        {"metrics", metrics}};
    if (!gate_json.is_null()) j["gate"] = gate_json;
    out << j.dump(2) << "\n";
  } else {
    out << "policy " << flags.out << "\n"
        << "  version      " << version << "\n"
        << "  objective    " << artifact->objective() << " ("
        << artifact->formulation() << ", " << config->algorithm << ")\n"
        << "  data         " << data->snapshot << "\n";
    for (const auto& [name, value] : metrics) {
      out << "  " << std::left << std::setw(30) << name << " " << value
          << "\n";
    }
    if (!gate_json.is_null()) {
      out << "  gate passed: " << gate_json["metric"].get<std::string>()
          << " " << gate_json["new"].get<double>() << " > "
          << gate_json["current"].get<double>() << "\n";
    }
  }
  return 0;
}

}  // namespace phaseloop::offline_rl
