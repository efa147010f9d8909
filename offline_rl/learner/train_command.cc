#include "offline_rl/learner/train_command.h"

#include <filesystem>
#include <iomanip>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/files/output_paths.h"
#include "common/signing/keys.h"
#include "common/signing/signature.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "nlohmann/json.hpp"
#include "offline_rl/evaluation/policy_evaluation.h"
#include "offline_rl/learner/publish_gate.h"
#include "offline_rl/learner/train_pipeline.h"
#include "proto/phaseloop/v1/policy.pb.h"

namespace phaseloop::offline_rl {
namespace {

constexpr int kGateRefused = 3;

int Fail(const absl::Status& status, std::ostream& err) {
  err << "phaseloop train: " << status.message() << "\n";
  return command::ExitCodeOf(status);
}

// The flag combinations CLI11 does not check.
absl::Status CheckFlagCombinations(const TrainFlags& flags) {
  if (flags.gate_corpus.empty() != flags.gate_against.empty()) {
    return absl::InvalidArgumentError(
        "--gate-corpus and --gate-against go together");
  }
  if (!flags.gate_workloads.empty() && !flags.gate_corpus.empty()) {
    return absl::InvalidArgumentError(
        "--gate-workloads judges a speed policy, --gate-corpus a size "
        "policy: give the one for the config's policy_objective");
  }
  if (flags.ungated && !flags.gate_workloads.empty()) {
    return absl::InvalidArgumentError(
        "--ungated and --gate-workloads contradict each other");
  }
  if ((!flags.explore_skip.empty() || !flags.stable_version.empty()) &&
      !flags.explore_untried) {
    return absl::InvalidArgumentError(
        "--explore-skip and --stable-version go with --explore-untried");
  }
  if (flags.resume && flags.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError(
        "--resume needs --checkpoint-dir (where the checkpoint is)");
  }
  return absl::OkStatus();
}

// What can be known wrong before a training run, checked before it: the
// files it writes (never one it reads, never a directory), the gate's
// inputs, and a checkpoint a fresh run would overwrite.
absl::Status CheckFilesBeforeTraining(const TrainFlags& flags) {
  std::vector<files::FlagPath> outputs = {{"--out", flags.out}};
  if (!flags.crossfit_out.empty()) {
    outputs.push_back({"--crossfit-out", flags.crossfit_out});
  }
  if (!flags.signing_key.empty()) {
    outputs.push_back({"--out's signature", flags.out + ".sig"});
  }
  absl::Status outputs_ok =
      files::CheckOutputPaths(outputs, {{"--buffer", flags.buffer},
                                        {"--config", flags.config},
                                        {"--candidates", flags.candidates},
                                        {"--gate-against", flags.gate_against},
                                        {"--signing-key", flags.signing_key}});
  if (!outputs_ok.ok()) return outputs_ok;
  std::error_code error;
  if (!flags.gate_against.empty()) {
    if (absl::Status loads = evaluation::CheckEvalPolicy(flags.gate_against);
        !loads.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--gate-against ", flags.gate_against, ": ", loads.message(),
          "; give the current policy the new one must beat (an "
          "artifact file or a wrapper policy spec)"));
    }
  }
  if (!flags.gate_corpus.empty() &&
      !std::filesystem::is_directory(flags.gate_corpus, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--gate-corpus ", flags.gate_corpus,
        " is not a directory: give a corpus `phaseloop corpus build` "
        "wrote"));
  }
  if (!flags.resume && !flags.checkpoint_dir.empty() &&
      std::filesystem::exists(
          std::filesystem::path(flags.checkpoint_dir) / "checkpoint.pt",
          error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--checkpoint-dir ", flags.checkpoint_dir,
        " holds a checkpoint a fresh run would overwrite: pass --resume to "
        "continue it, or give an empty directory"));
  }
  return absl::OkStatus();
}

// The gate's figures: the summary's "gate" object.
nlohmann::json GateJson(const GateResult& gate) {
  return {{"passed", gate.passed},
          {"metric", gate.metric},
          {"new", gate.candidate_score},
          {"current", gate.current_score},
          {"modules", gate.modules},
          {"new_failed_modules", gate.candidate_failed}};
}

// With --explore-untried: the summary's "exploration" object.
nlohmann::json ExplorationJson(const TrainingData& training,
                               const CanaryExploration& e) {
  nlohmann::json j = {
      {"exploring", e.exploring}, {"modules", e.modules}, {"reason", e.reason}};
  if (e.exploring) {
    const Candidate& c = training.data.candidates[e.candidate];
    j["candidate"] = c.name;
    j["pipeline"] = c.pipeline;
    j["bias"] = e.bias / training.config.reward_scale;
  }
  return j;
}

// Why the gate refused the new policy, on stderr.
void PrintRefusal(const GateResult& gate, const std::string& out_path,
                  std::ostream& err) {
  if (!gate.report.empty()) {
    err << gate.report << "phaseloop train: not published: the speed gate "
        << "refused the new policy on " << gate.modules
        << " held-out workloads; " << out_path << " left untouched\n";
    return;
  }
  err << "phaseloop train: not published: the new policy's " << gate.metric
      << " " << gate.candidate_score << " does not beat the current policy's "
      << gate.current_score << " on " << gate.modules << " validation modules ("
      << gate.candidate_failed << " failed); " << out_path
      << " left untouched\n";
}

// The summary of a written policy: JSON with --json, else a table.
void PrintSummary(const TrainFlags& flags, const TrainingData& training,
                  const PolicyMeasures& measures,
                  const v1::PolicyArtifact& artifact,
                  const std::optional<GateResult>& gate, std::ostream& out) {
  const std::string version = policy_runtime::PolicyVersionOf(artifact);
  const LearnerConfig& config = training.config;
  if (flags.json) {
    nlohmann::json j = {
        {"out", flags.out},
        {"policy_version", version},
        {"objective", artifact.objective()},
        {"formulation", artifact.formulation()},
        {"algorithm", config.algorithm},
        {"seed", config.seed},
        {"data_snapshot", training.data.snapshot},
        {"training_command", artifact.metadata().training_command()},
        {"metrics", measures.metrics}};
    if (gate) j["gate"] = GateJson(*gate);
    if (measures.exploration) {
      j["exploration"] = ExplorationJson(training, *measures.exploration);
    }
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return;
  }
  out << "policy " << flags.out << "\n"
      << "  version      " << version << "\n"
      << "  objective    " << artifact.objective() << " ("
      << artifact.formulation() << ", " << config.algorithm << ")\n"
      << "  data         " << training.data.snapshot << "\n";
  if (measures.exploration) {
    out << "  exploration  " << measures.exploration->reason << "\n";
  }
  for (const auto& [name, value] : measures.metrics) {
    out << "  " << std::left << std::setw(30) << name << " " << value << "\n";
  }
  if (gate && !gate->report.empty()) {
    out << gate->report;
  } else if (gate) {
    out << "  gate passed: " << gate->metric << " " << gate->candidate_score
        << " > " << gate->current_score << "\n";
  }
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
  app.add_option("--threads", flags.threads,
                 "libtorch threads (fix it for "
                 "bit-identical weights)")
      ->check(CLI::Range(1, 256));
  app.add_option("--seed", flags.seed, "overrides the config's seed")
      ->check(command::NonNegativeNumber());
  app.add_option("--gate-corpus", flags.gate_corpus,
                 "publish only if the new policy beats --gate-against on "
                 "this corpus's validation split");
  app.add_option("--gate-against", flags.gate_against,
                 "the current policy the new one must beat");
  app.add_option("--gate-split", flags.gate_split,
                 "the corpus split the gate evaluates (\"\" = all)")
      ->capture_default_str();
  app.add_option("--gate-workloads", flags.gate_workloads,
                 "a speed policy's gate: stage it on this workload split "
                 "(e.g. test) and publish only if no workload is slower");
  app.add_option("--gate-workload", flags.gate_workload_names,
                 "with --gate-workloads: only this workload of the split "
                 "(a name; repeatable), for a shorter gate");
  app.add_option("--gate-workloads-dir", flags.gate_workloads_dir,
                 "where --gate-workloads' workload files are")
      ->capture_default_str();
  app.add_option("--gate-cc", flags.gate_cc,
                 "the phaseloop-cc the speed gate builds with (default: "
                 "$PHASELOOP_CC, beside this binary, PATH)");
  app.add_option("--gate-work-dir", flags.gate_work_dir,
                 "the speed gate's scratch directory");
  app.add_option("--gate-budget-s", flags.gate_budget_s,
                 "the speed gate's timing seconds per workload")
      ->check(command::PositiveNumber())
      ->capture_default_str();
  app.add_flag("--gate-untimed", flags.gate_untimed,
               "the speed gate checks each workload's outputs and times "
               "nothing: it refuses only a policy that miscompiles (smoke "
               "runs; a real publish gate times)");
  app.add_option("--gate-object-cache", flags.gate_object_cache,
                 "the speed gate's builds share this object cache directory "
                 "(PHASELOOP_OBJECT_CACHE: units unchanged between builds "
                 "compile once; default: none)");
  app.add_flag("--ungated", flags.ungated,
               "write a speed policy without its gate (for inspection, "
               "not for publishing)");
  app.add_flag("--explore-untried", flags.explore_untried,
               "speed policy: when it would build the service's code exactly "
               "like stable (--stable-version; without it: when canaries "
               "judged every choice it makes there), try the most promising "
               "candidate no canary has judged (a bias on that output; the "
               "closed loop's train stage)");
  app.add_option("--explore-skip", flags.explore_skip,
                 "with --explore-untried: a pipeline not to try (one an "
                 "earlier exploration tried that never reached a canary; "
                 "repeatable)");
  app.add_option("--stable-version", flags.stable_version,
                 "with --explore-untried: the stable policy's version (or "
                 "'plain' for plain clang); explore only when the new policy "
                 "would build the service's code exactly like it");
  app.add_flag("--json", flags.json, "machine-readable summary");
  app.add_option("--signing-key", flags.signing_key,
                 "sign the published artifact with this secret key "
                 "(`phaseloop policy keygen`): writes OUT.sig beside --out");
  app.add_option("--crossfit-out", flags.crossfit_out,
                 "with single_abstain: write the cross-fitted scores and "
                 "measured .text sizes of the training modules (JSON)");
}

int RunTrain(const TrainFlags& flags, std::ostream& out, std::ostream& err) {
  if (absl::Status valid = CheckFlagCombinations(flags); !valid.ok()) {
    return Fail(valid, err);
  }
  if (absl::Status files_ok = CheckFilesBeforeTraining(flags); !files_ok.ok()) {
    return Fail(files_ok, err);
  }
  // The key is read before any work: a bad key file costs no training run.
  std::optional<signing::SigningKey> signing_key;
  if (!flags.signing_key.empty()) {
    absl::StatusOr<signing::SigningKey> key =
        signing::ReadSigningKeyFile(flags.signing_key);
    if (!key.ok()) {
      return Fail(absl::InvalidArgumentError(
                      absl::StrCat("--signing-key: ", key.status().message())),
                  err);
    }
    signing_key = *std::move(key);
  }
  const signing::SigningKey* key = signing_key ? &*signing_key : nullptr;
  auto training = LoadTrainingData(flags, err);
  if (!training.ok()) return Fail(training.status(), err);
  auto trained = TrainNetwork(*training, flags, err);
  if (!trained.ok()) return Fail(trained.status(), err);
  auto measures = MeasurePolicy(*training, *trained, flags, err);
  if (!measures.ok()) return Fail(measures.status(), err);
  auto exported = ExportPolicy(*training, *trained, *measures, flags, key);
  if (!exported.ok()) return Fail(exported.status(), err);
  auto published = GateAndPublish(*exported, training->config, flags, key);
  if (!published.ok()) return Fail(published.status(), err);
  if (!published->published) {
    PrintRefusal(*published->gate, flags.out, err);
    if (flags.json) {
      nlohmann::json j = {{"gate", GateJson(*published->gate)}};
      if (measures->exploration) {
        j["exploration"] = ExplorationJson(*training, *measures->exploration);
      }
      out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
    }
    return kGateRefused;
  }
  if (key != nullptr) {
    err << "phaseloop train: signed with key " << key->key_id << ": "
        << signing::SignaturePathFor(flags.out) << "\n";
  }
  PrintSummary(flags, *training, *measures, exported->artifact, published->gate,
               out);
  return 0;
}

}  // namespace phaseloop::offline_rl
