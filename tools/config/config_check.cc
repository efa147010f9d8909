#include "tools/config/config_check.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "canary/budget_policy/budget_policy_config.h"
#include "canary/controller/service_config.h"
#include "canary/judge/judge_config.h"
#include "canary/load/load_spec_yaml.h"
#include "common/config/yaml_documents.h"
#include "common/config/yaml_fields.h"
#include "common/config/yaml_files.h"
#include "common/config/yaml_keys.h"
#include "common/files/atomic_file.h"
#include "offline_rl/learner/learner_config.h"
#include "reward_engine/slo/slo_config.h"
#include "staging_harness/workloads/workload.h"
#include "staging_harness/workloads/workload_files.h"
#include "tools/loop/loop_config.h"

namespace phaseloop::config_check {
namespace {

namespace fs = std::filesystem;

// Top-level keys only one kind of file has (the parsers list every key;
// these are enough to tell the kinds apart).
const std::map<ConfigKind, std::set<std::string>>& KindMarkers() {
  static const auto* markers = new std::map<ConfigKind, std::set<std::string>>{
      {ConfigKind::kService, {"handler", "slo_dir", "instances", "rollout"}},
      {ConfigKind::kJudge,
       {"confidence", "score", "unproven_change", "defaults", "metrics"}},
      {ConfigKind::kBudgetPolicy,
       {"tiers", "budget_groups", "alert_groups", "page_alerts",
        "ticket_alerts", "ticket_demotes_tiers", "no_budget_data"}},
      {ConfigKind::kLoad, {"load"}},
      {ConfigKind::kSlo, {"apiVersion", "kind"}},
      {ConfigKind::kLearner,
       {"formulation", "algorithm", "objective", "policy_objective",
        "optimizer", "network", "cql_alpha", "fqe", "single_abstain",
        "candidates_file", "default_top_k"}},
      {ConfigKind::kLoop, {"explore", "gate", "workloads_dir", "learner"}},
      {ConfigKind::kWorkload,
       {"build", "run", "inputs", "split", "source", "description"}},
  };
  return *markers;
}

// "1 tier", "2 tiers".
std::string Count(size_t n, const std::string& noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

std::string Normal(const std::string& path) {
  return fs::path(path).lexically_normal().string();
}

std::string Percent(double fraction) {
  return absl::StrCat(fraction * 100, " %");
}

// A service and the files it names: its judge and error budget policy (read
// by its parser) and its SLO directory (which the reward engine reads).
absl::StatusOr<std::string> SummarizeService(const std::string& path) {
  auto service = canary::LoadServiceConfig(path);
  if (!service.ok()) return service.status();
  const config::YamlFields fields(path, "configs/services/demo.yaml");
  auto slos =
      slo::LoadSloDirectory(service->slo_dir, service->reward_window_ms);
  if (!slos.ok()) return fields.InFile("slo_dir", slos.status());
  // What `canary run` refuses too: no SLO for the service, no rewards.
  if (std::none_of(slos->begin(), slos->end(), [&](const slo::Slo& slo) {
        return slo.service == service->service;
      })) {
    return fields.Bad(
        "slo_dir",
        absl::StrCat(service->slo_dir, " has no SLO whose spec.service is ",
                     service->service,
                     ": the reward engine could not reward its "
                     "windows; add one (see configs/slo)"));
  }
  double widest = 0;
  for (const auto& step : service->rollout.steps) {
    widest = std::max(widest, step.canary_weight());
  }
  return absl::StrCat(
      service->service, ": ", Count(service->rollout.steps.size(), "step"),
      " up to ", Percent(widest), " of traffic, load ", service->load.rate,
      " requests/s, ",
      Count(service->budget_policy.tiers.size(), "exploration tier"), ", ",
      Count(slos->size(), "SLO"));
}

absl::StatusOr<std::string> SummarizeJudge(const std::string& path) {
  auto judge = canary::LoadJudgeConfig(path);
  if (!judge.ok()) return judge.status();
  std::vector<std::string> metrics;
  for (const auto& [name, rule] : judge->metrics) metrics.push_back(name);
  return absl::StrCat(
      "confidence ", judge->confidence, ", ",
      metrics.empty() ? std::string("one rule for every metric")
                      : absl::StrCat("rules for ", absl::StrJoin(metrics, ", "),
                                     " and a default for the rest"));
}

absl::StatusOr<std::string> SummarizeBudgetPolicy(const std::string& path) {
  auto policy = canary::LoadBudgetPolicy(path);
  if (!policy.ok()) return policy.status();
  std::vector<std::string> tiers;
  for (const auto& tier : policy->tiers) {
    tiers.push_back(absl::StrCat(
        tier.name, " (", Percent(tier.min_budget_remaining), " budget left)"));
  }
  return absl::StrCat("tiers ", absl::StrJoin(tiers, ", "),
                      "; below the last: frozen");
}

absl::StatusOr<std::string> SummarizeLoad(const std::string& path) {
  auto load = canary::load::LoadSpecFromFile(path);
  if (!load.ok()) return load.status();
  std::vector<std::string> kinds;
  for (const auto& entry : load->mix) kinds.push_back(entry.kind);
  return absl::StrCat(load->rate, " requests/s of ",
                      absl::StrJoin(kinds, ", "));
}

absl::StatusOr<std::string> SummarizeSlo(const std::string& path) {
  auto slos = slo::LoadSloFile(path);
  if (!slos.ok()) return slos.status();
  std::vector<std::string> names;
  for (const auto& objective : *slos) {
    names.push_back(absl::StrCat(objective.service, "/", objective.name, " (",
                                 objective.threshold_ms, " ms, ",
                                 Percent(objective.target), ")"));
  }
  return absl::StrCat(Count(slos->size(), "SLO"), ": ",
                      absl::StrJoin(names, ", "));
}

absl::StatusOr<std::string> SummarizeLearner(const std::string& path) {
  auto learner = offline_rl::LoadLearnerConfig(path);
  if (!learner.ok()) return learner.status();
  // A runtime policy learns from staging rewards over episodes of another
  // objective (ir_count steps): name the policy's objective first.
  const std::string& policy = learner->policy_objective.empty()
                                  ? learner->objective
                                  : learner->policy_objective;
  return absl::StrCat(
      learner->formulation, " formulation, ", learner->algorithm, ", a ",
      policy, " policy",
      policy == learner->objective
          ? ""
          : absl::StrCat(" from ", learner->objective, " episodes"));
}

absl::StatusOr<std::string> SummarizeWorkload(const std::string& path) {
  auto workload = workloads::LoadWorkload(path);
  if (!workload.ok()) return workload.status();
  return absl::StrCat(
      workload->name, " (", workloads::SplitName(workload->split),
      " split): ", workloads::BuildKindName(workload->build.kind), " build, ",
      Count(workload->runs.size(), "run command"), ", ",
      Count(workload->inputs.size(), "input"));
}

// A loop and the files it names: its service (with that service's own),
// its learner settings and the workloads it explores, stages and gates on.
absl::StatusOr<std::string> SummarizeLoop(const std::string& path) {
  auto loop = loop::LoadLoopConfig(path);
  if (!loop.ok()) return loop.status();
  const config::YamlFields fields(path, "configs/loop/demo.yaml");
  if (auto service = SummarizeService(loop->service); !service.ok()) {
    return fields.InFile("service", service.status());
  }
  if (auto learner = SummarizeLearner(loop->learner); !learner.ok()) {
    return fields.InFile("learner", learner.status());
  }
  std::vector<std::pair<std::string, std::string>> workloads = {
      {"explore.workload", loop->explore_workload},
      {"stage.workload", loop->stage_workload}};
  for (const std::string& name : loop->gate_workloads) {
    workloads.push_back({"gate.workloads", name});
  }
  for (const auto& [field, name] : workloads) {
    auto file = workloads::WorkloadFileFor(name, loop->workloads_dir);
    if (!file.ok()) return fields.InFile(field, file.status());
    if (auto workload = SummarizeWorkload(*file); !workload.ok()) {
      return fields.InFile(field, workload.status());
    }
  }
  if (absl::Status gate = loop::CheckGateWorkloads(*loop, path); !gate.ok()) {
    return gate;
  }
  return absl::StrCat(Count(loop->iterations, "iteration"), " exploring ",
                      loop->explore_workload, ", staging ",
                      loop->stage_workload, " (service ", Normal(loop->service),
                      ", learner ", Normal(loop->learner),
                      " and workloads checked too)");
}

}  // namespace

const std::vector<std::string>& ConfigKindNames() {
  static const auto* names = new std::vector<std::string>{
      "service", "judge",   "budget-policy", "load",
      "slo",     "learner", "loop",          "workload"};
  return *names;
}

std::string ConfigKindName(ConfigKind kind) {
  return ConfigKindNames()[static_cast<size_t>(kind)];
}

std::optional<ConfigKind> ConfigKindFromName(const std::string& name) {
  const auto& names = ConfigKindNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<ConfigKind>(i);
  }
  return std::nullopt;
}

namespace {

// What a file's keys tell of its kind.
struct Inference {
  absl::StatusOr<ConfigKind> kind;
  // Another tool's manifest (Kubernetes', say): an apiVersion other than
  // OpenSLO's and a kind, which only SLO files among phaseloop's have.
  bool foreign = false;
};

// A scalar's text, "" for anything else.
std::string ScalarText(const YAML::Node& node) {
  return node && node.IsScalar() ? node.Scalar() : std::string();
}

Inference Infer(const std::string& path) {
  std::string text;
  if (!files::ReadWholeFile(path, &text).ok()) {
    return {absl::NotFoundError(
        absl::StrCat("cannot read ", path, "; give an existing config file"))};
  }
  const std::string give_kind = absl::StrCat(
      "give --kind (", absl::StrJoin(ConfigKindNames(), ", "), ")");
  std::vector<YAML::Node> documents;
  try {
    documents = config::LoadYamlDocuments(text);
  } catch (const YAML::Exception& e) {
    return {absl::InvalidArgumentError(
        absl::StrCat(path, ": not valid YAML: ", e.what()))};
  }
  const auto first = std::find_if(
      documents.begin(), documents.end(),
      [](const YAML::Node& document) { return document && document.IsMap(); });
  if (first == documents.end()) {
    return {absl::InvalidArgumentError(absl::StrCat(
        path, ": no mapping of settings to tell its kind by; ", give_kind))};
  }
  const std::string api_version = ScalarText((*first)["apiVersion"]);
  const std::string manifest_kind = ScalarText((*first)["kind"]);
  if (!api_version.empty() && !manifest_kind.empty() &&
      !absl::StartsWith(api_version, "openslo/")) {
    return {absl::InvalidArgumentError(absl::StrCat(
                path, ": a manifest of kind ", manifest_kind, " (apiVersion ",
                api_version,
                "), not a phaseloop config (an SLO file's apiVersion is "
                "openslo/v1); leave it out")),
            /*foreign=*/true};
  }
  std::map<ConfigKind, int> votes;
  for (const auto& entry : *first) {
    const std::string key = config::MappingKeyText(entry.first);
    for (const auto& [kind, markers] : KindMarkers()) {
      if (markers.count(key)) ++votes[kind];
    }
  }
  int most = 0;
  std::vector<ConfigKind> leaders;
  for (const auto& [kind, count] : votes) {
    if (count > most) leaders.clear();
    if (count >= most) {
      most = count;
      leaders.push_back(kind);
    }
  }
  if (leaders.size() == 1) return {leaders.front()};
  std::vector<std::string> named;
  for (ConfigKind kind : leaders) named.push_back(ConfigKindName(kind));
  return {absl::InvalidArgumentError(absl::StrCat(
      path, ": cannot tell what kind of config it is",
      named.empty() ? std::string(" (no key any kind has)")
                    : absl::StrCat(" (", absl::StrJoin(named, " or "), ")"),
      "; ", give_kind))};
}

}  // namespace

absl::StatusOr<ConfigKind> InferConfigKind(const std::string& path) {
  return Infer(path).kind;
}

CheckedConfig CheckConfig(const std::string& path,
                          std::optional<ConfigKind> kind) {
  CheckedConfig checked;
  checked.path = path;
  if (!kind) {
    Inference inferred = Infer(path);
    if (!inferred.kind.ok()) {
      checked.status = inferred.kind.status();
      checked.foreign = inferred.foreign;
      return checked;
    }
    kind = *inferred.kind;
  }
  checked.kind = kind;
  absl::StatusOr<std::string> summary;
  switch (*kind) {
    case ConfigKind::kService:
      summary = SummarizeService(path);
      break;
    case ConfigKind::kJudge:
      summary = SummarizeJudge(path);
      break;
    case ConfigKind::kBudgetPolicy:
      summary = SummarizeBudgetPolicy(path);
      break;
    case ConfigKind::kLoad:
      summary = SummarizeLoad(path);
      break;
    case ConfigKind::kSlo:
      summary = SummarizeSlo(path);
      break;
    case ConfigKind::kLearner:
      summary = SummarizeLearner(path);
      break;
    case ConfigKind::kLoop:
      summary = SummarizeLoop(path);
      break;
    case ConfigKind::kWorkload:
      summary = SummarizeWorkload(path);
      break;
  }
  if (summary.ok()) {
    checked.summary = *summary;
  } else {
    checked.status = summary.status();
  }
  return checked;
}

absl::StatusOr<std::vector<ConfigFile>> ConfigFiles(
    const std::vector<std::string>& paths) {
  std::vector<ConfigFile> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      absl::StatusOr<std::vector<config::FoundYaml>> found =
          config::FindYamlFiles(path);
      if (!found.ok()) return found.status();
      for (config::FoundYaml& yaml : *found) {
        files.push_back({std::move(yaml.path), /*found_in_directory=*/true});
      }
    } else if (fs::exists(path, error)) {
      files.push_back({path, /*found_in_directory=*/false});
    } else {
      return absl::NotFoundError(
          absl::StrCat(path,
                       ": no such file or directory; give config files or a "
                       "directory of them (e.g. configs)"));
    }
  }
  return files;
}

}  // namespace phaseloop::config_check
