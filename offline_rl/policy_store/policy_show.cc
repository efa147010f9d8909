#include "offline_rl/policy_store/policy_show.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace phaseloop::policy_store {
namespace {

using nlohmann::json;

const char* ActivationName(v1::DenseLayer::Activation activation) {
  switch (activation) {
    case v1::DenseLayer::RELU:
      return "relu";
    case v1::DenseLayer::TANH:
      return "tanh";
    default:
      return "identity";
  }
}

std::string Shorten(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return absl::StrCat(text.substr(0, width - 3), "...");
}

}  // namespace

std::string DescribePolicyText(const v1::PolicyArtifact& artifact,
                               const std::string& policy_version,
                               size_t file_bytes) {
  const v1::PolicyMetadata& metadata = artifact.metadata();
  std::string text = absl::StrCat(
      "policy_version   ", policy_version, "\n", "format_version   ",
      artifact.format_version(), " (", file_bytes, " bytes)\n",
      "objective        ", artifact.objective(), "\n", "formulation      ",
      artifact.formulation(), "\n", "action space     ",
      artifact.action_space_version(), ", ", artifact.action_names_size(),
      " actions\n", "normalization    ", artifact.normalization().layout(),
      ", ", artifact.normalization().mean_size(), " inputs\n");
  std::vector<std::string> layers;
  for (const v1::DenseLayer& layer : artifact.layers()) {
    layers.push_back(absl::StrCat(layer.inputs(), "->", layer.outputs(), " ",
                                  ActivationName(layer.activation())));
  }
  absl::StrAppend(
      &text, "layers           ", absl::StrJoin(layers, ", "), "\n",
      "max_steps        ", artifact.max_steps(), "\n", "default_top_k    ",
      artifact.default_top_k(), "\n", "single_abstain   ",
      artifact.single_abstain_margin() > 0
          ? absl::StrCat("-Oz unless the best beats it by ",
                         artifact.single_abstain_margin())
          : std::string("(none)"),
      "\n", "algorithm        ", metadata.algorithm(), "\n",
      "seed             ", metadata.seed(), "\n", "parent_version   ",
      metadata.parent_version().empty() ? "(none)" : metadata.parent_version(),
      "\n", "training_command ", metadata.training_command(), "\n",
      "data_snapshot    ", metadata.data_snapshot(), "\n");
  std::map<std::string, double> metrics(metadata.metrics().begin(),
                                        metadata.metrics().end());
  absl::StrAppend(&text, "metrics          ", metrics.empty() ? "(none)" : "",
                  "\n");
  for (const auto& [name, value] : metrics) {
    absl::StrAppend(&text, "  ", name, " = ", value, "\n");
  }
  int excluded = 0;
  for (const v1::CandidatePipeline& candidate : artifact.candidates()) {
    excluded += candidate.single_excluded() ? 1 : 0;
  }
  absl::StrAppend(&text, "candidates       ", artifact.candidates_size(),
                  excluded > 0
                      ? absl::StrCat(" (", excluded, " never single's pick: *)")
                      : "",
                  "\n");
  for (const v1::CandidatePipeline& candidate : artifact.candidates()) {
    absl::StrAppend(&text, "  ", candidate.name(),
                    candidate.single_excluded() ? "*" : "", " (",
                    candidate.actions_size(),
                    " actions): ", Shorten(candidate.pipeline(), 100), "\n");
  }
  return text;
}

json DescribePolicyJson(const v1::PolicyArtifact& artifact,
                        const std::string& policy_version, size_t file_bytes) {
  const v1::PolicyMetadata& metadata = artifact.metadata();
  json layers = json::array();
  for (const v1::DenseLayer& layer : artifact.layers()) {
    layers.push_back({{"inputs", layer.inputs()},
                      {"outputs", layer.outputs()},
                      {"activation", ActivationName(layer.activation())}});
  }
  json candidates = json::array();
  for (const v1::CandidatePipeline& candidate : artifact.candidates()) {
    candidates.push_back(
        {{"name", candidate.name()},
         {"actions", std::vector<int>(candidate.actions().begin(),
                                      candidate.actions().end())},
         {"pipeline", candidate.pipeline()},
         {"single_excluded", candidate.single_excluded()}});
  }
  json metrics = json::object();
  for (const auto& [name, value] : metadata.metrics()) metrics[name] = value;
  return {
      {"policy_version", policy_version},
      {"format_version", artifact.format_version()},
      {"file_bytes", file_bytes},
      {"objective", artifact.objective()},
      {"formulation", artifact.formulation()},
      {"action_space_version", artifact.action_space_version()},
      {"action_names", std::vector<std::string>(artifact.action_names().begin(),
                                                artifact.action_names().end())},
      {"normalization",
       {{"layout", artifact.normalization().layout()},
        {"inputs", artifact.normalization().mean_size()}}},
      {"layers", layers},
      {"max_steps", artifact.max_steps()},
      {"default_top_k", artifact.default_top_k()},
      {"single_abstain_margin", artifact.single_abstain_margin()},
      {"metadata",
       {{"algorithm", metadata.algorithm()},
        {"training_command", metadata.training_command()},
        {"data_snapshot", metadata.data_snapshot()},
        {"parent_version", metadata.parent_version()},
        {"config", metadata.config()},
        {"seed", metadata.seed()},
        {"metrics", metrics}}},
      {"candidates", candidates},
  };
}

}  // namespace phaseloop::policy_store
