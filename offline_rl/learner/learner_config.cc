#include "offline_rl/learner/learner_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_fields.h"
#include "common/config/yaml_keys.h"
#include "compiler_driver/policy_runtime/artifact_limits.h"

namespace phaseloop::offline_rl {
namespace {

constexpr char kDocs[] = "offline_rl/learner/learner_config.h";

// Reads the config's fields through config::YamlFields, remembering the
// first error so callers check once at the end.
class Reader {
 public:
  explicit Reader(std::string source) : fields_(std::move(source), kDocs) {}

  const config::YamlFields& fields() const { return fields_; }
  absl::Status status() const { return status_; }

  void Keep(absl::Status status) {
    if (status_.ok()) status_ = std::move(status);
  }
  void Fail(const std::string& field, const std::string& problem) {
    Keep(fields_.Bad(field, problem));
  }
  // Refuses a `node` that is not a mapping, and keys outside `allowed`.
  void CheckKeys(const YAML::Node& node, const std::string& prefix,
                 const std::set<std::string>& allowed) {
    Keep(fields_.CheckKeys(prefix, node, allowed));
  }

  // map[key] into `out` when present (the default kept when absent).
  void Get(const YAML::Node& map, const std::string& prefix,
           const std::string& key, std::string* out) {
    // "" is a value here: policy_objective's and candidates_file's "none".
    if (const YAML::Node value = map[key];
        value && value.IsScalar() && value.Scalar().empty()) {
      out->clear();
      return;
    }
    Keep(fields_.Text(prefix, map, key, *out));
  }
  void Get(const YAML::Node& map, const std::string& prefix,
           const std::string& key, double* out) {
    Keep(fields_.Number(prefix, map, key, config::NumberRange(), *out));
  }
  template <typename Integer>
  std::enable_if_t<std::is_integral_v<Integer>> Get(const YAML::Node& map,
                                                    const std::string& prefix,
                                                    const std::string& key,
                                                    Integer* out) {
    Keep(fields_.Int(prefix, map, key, std::numeric_limits<int64_t>::min(),
                     config::YamlFields::kNoUpperEnd, *out));
  }
  // A list of whole numbers.
  void Get(const YAML::Node& map, const std::string& prefix,
           const std::string& key, std::vector<int>* out) {
    const YAML::Node list = map[key];
    if (!list) return;
    const std::string field = config::YamlFields::Field(prefix, key);
    if (!list.IsSequence()) return Fail(field, "expected a list, e.g. [128]");
    std::vector<int> values;
    for (size_t i = 0; i < list.size(); ++i) {
      auto value = fields_.IntValue(absl::StrCat(field, "[", i, "]"), list[i],
                                    std::numeric_limits<int>::min(),
                                    std::numeric_limits<int>::max());
      if (!value.ok()) return Keep(value.status());
      values.push_back(static_cast<int>(*value));
    }
    *out = std::move(values);
  }
  // A mapping of names to numbers.
  void Get(const YAML::Node& map, const std::string& prefix,
           const std::string& key, std::map<std::string, double>* out) {
    const YAML::Node names = map[key];
    if (!names) return;
    const std::string field = config::YamlFields::Field(prefix, key);
    if (!names.IsMap()) {
      return Fail(field, "expected a mapping of names to numbers");
    }
    std::map<std::string, double> values;
    for (const auto& entry : names) {
      const std::string name = config::MappingKeyText(entry.first);
      auto value = fields_.NumberValue(config::YamlFields::Field(field, name),
                                       entry.second);
      if (!value.ok()) return Keep(value.status());
      if (!values.emplace(name, *value).second) {
        return Fail(config::YamlFields::Field(field, name),
                    "given twice; keep one");
      }
    }
    *out = std::move(values);
  }

 private:
  config::YamlFields fields_;
  absl::Status status_;
};

void ReadOptimizer(Reader& r, const YAML::Node& node, const std::string& name,
                   OptimizerConfig* out) {
  if (!node) return;
  r.CheckKeys(node, name,
              {"steps", "batch_size", "learning_rate", "weight_decay",
               "max_grad_norm"});
  if (!node.IsMap()) return;
  r.Get(node, name, "steps", &out->steps);
  r.Get(node, name, "batch_size", &out->batch_size);
  r.Get(node, name, "learning_rate", &out->learning_rate);
  r.Get(node, name, "weight_decay", &out->weight_decay);
  r.Get(node, name, "max_grad_norm", &out->max_grad_norm);
  if (out->steps < 0) r.Fail(name + ".steps", "must be >= 0");
  if (out->batch_size < 1) r.Fail(name + ".batch_size", "must be >= 1");
  if (!(out->learning_rate > 0) || !std::isfinite(out->learning_rate)) {
    r.Fail(name + ".learning_rate", "must be a finite number > 0");
  }
  if (out->weight_decay < 0) r.Fail(name + ".weight_decay", "must be >= 0");
  if (out->max_grad_norm < 0) r.Fail(name + ".max_grad_norm", "must be >= 0");
}

}  // namespace

absl::StatusOr<LearnerConfig> ParseLearnerConfig(absl::string_view yaml,
                                                 absl::string_view source) {
  LearnerConfig c;
  c.text = std::string(yaml);
  Reader r{std::string(source)};
  auto parsed = r.fields().Parse(std::string(yaml));
  if (!parsed.ok()) return parsed.status();
  const YAML::Node root = *parsed;
  if (!root.IsMap()) {
    return r.fields().Bad("(top)", "expected a mapping of settings");
  }
  r.CheckKeys(root, "",
              {"formulation",
               "algorithm",
               "objective",
               "policy_objective",
               "train_split",
               "validation_split",
               "max_steps",
               "default_top_k",
               "candidates_file",
               "reward",
               "network",
               "optimizer",
               "gamma",
               "cql_alpha",
               "target_update_period",
               "checkpoint_every",
               "log_every",
               "fqe",
               "single_abstain",
               "seed"});
  r.Get(root, "", "formulation", &c.formulation);
  r.Get(root, "", "algorithm", &c.algorithm);
  r.Get(root, "", "objective", &c.objective);
  r.Get(root, "", "policy_objective", &c.policy_objective);
  r.Get(root, "", "train_split", &c.train_split);
  r.Get(root, "", "validation_split", &c.validation_split);
  r.Get(root, "", "max_steps", &c.max_steps);
  r.Get(root, "", "default_top_k", &c.default_top_k);
  r.Get(root, "", "candidates_file", &c.candidates_file);
  r.Get(root, "", "gamma", &c.gamma);
  r.Get(root, "", "cql_alpha", &c.cql_alpha);
  r.Get(root, "", "target_update_period", &c.target_update_period);
  r.Get(root, "", "checkpoint_every", &c.checkpoint_every);
  r.Get(root, "", "log_every", &c.log_every);
  r.Get(root, "", "seed", &c.seed);
  if (const YAML::Node reward = root["reward"]) {
    r.CheckKeys(reward, "reward", {"step_weight", "final_weights", "scale"});
    if (reward.IsMap()) {
      r.Get(reward, "reward", "step_weight", &c.step_reward_weight);
      r.Get(reward, "reward", "final_weights", &c.final_reward_weights);
      r.Get(reward, "reward", "scale", &c.reward_scale);
    }
    for (const auto& [source_name, weight] : c.final_reward_weights) {
      if (source_name != "staging" && source_name != "canary") {
        r.Fail("reward.final_weights." + source_name,
               "unknown reward source; expected staging or canary");
      }
      if (!std::isfinite(weight)) {
        r.Fail("reward.final_weights." + source_name, "must be finite");
      }
    }
  }
  if (const YAML::Node network = root["network"]) {
    r.CheckKeys(network, "network", {"hidden"});
    if (network.IsMap()) r.Get(network, "network", "hidden", &c.network.hidden);
    for (int width : c.network.hidden) {
      if (width < 1) r.Fail("network.hidden", "every width must be >= 1");
    }
  }
  if (const YAML::Node abstain = root["single_abstain"]) {
    r.CheckKeys(abstain, "single_abstain",
                {"folds", "tolerance", "max_over_modules",
                 "candidate_max_over_modules"});
    if (abstain.IsMap()) {
      r.Get(abstain, "single_abstain", "folds", &c.single_abstain.folds);
      r.Get(abstain, "single_abstain", "tolerance",
            &c.single_abstain.tolerance);
      r.Get(abstain, "single_abstain", "max_over_modules",
            &c.single_abstain.max_over_modules);
      r.Get(abstain, "single_abstain", "candidate_max_over_modules",
            &c.single_abstain.candidate_max_over_modules);
    }
  }
  ReadOptimizer(r, root["optimizer"], "optimizer", &c.optimizer);
  c.fqe.steps = 0;
  ReadOptimizer(r, root["fqe"], "fqe", &c.fqe);
  if (!r.status().ok()) return r.status();

  if (c.formulation != "candidate" && c.formulation != "stepwise") {
    r.Fail("formulation", "expected candidate or stepwise");
  }
  if (c.algorithm != "cql" && c.algorithm != "bc") {
    r.Fail("algorithm", "expected cql or bc");
  }
  if (c.objective != "alloc_size" && c.objective != "text_size" &&
      c.objective != "ir_count" && c.objective != "runtime") {
    r.Fail("objective",
           "expected alloc_size, text_size, ir_count or runtime (the "
           "episodes read)");
  }
  if (c.objective == "runtime" && c.formulation != "candidate") {
    r.Fail("objective",
           "runtime episodes (runtime search evaluations) train the candidate "
           "formulation only: set formulation: candidate");
  }
  if (c.objective == "runtime" && !c.policy_objective.empty() &&
      c.policy_objective != "runtime") {
    r.Fail("policy_objective",
           "a policy learnt from runtime episodes is a "
           "runtime policy: set runtime or leave it out");
  }
  if (c.policy_objective.empty()) c.policy_objective = c.objective;
  if (c.policy_objective != "alloc_size" && c.policy_objective != "text_size" &&
      c.policy_objective != "ir_count" && c.policy_objective != "runtime") {
    r.Fail("policy_objective",
           "expected alloc_size, text_size, ir_count or runtime");
  }
  if (!(c.reward_scale > 0) || !std::isfinite(c.reward_scale)) {
    r.Fail("reward.scale", "must be a finite number > 0");
  }
  if (c.max_steps < 1 || c.max_steps > policy_runtime::kMaxStepwiseSteps) {
    r.Fail("max_steps",
           absl::StrCat("must be in [1, ", policy_runtime::kMaxStepwiseSteps,
                        "] (an artifact with more is refused at load)"));
  }
  if (c.train_split == "test") {
    r.Fail("train_split",
           "the test split is held out for the figures reported, never "
           "trained on: use train");
  }
  if (c.validation_split == "test") {
    r.Fail("validation_split",
           "the test split is held out for the figures reported, never "
           "looked at while training (validation figures are what one "
           "chooses on): use validation");
  }
  if (c.default_top_k < 0) r.Fail("default_top_k", "must be >= 0");
  if (!(c.gamma >= 0 && c.gamma < 1)) r.Fail("gamma", "must be in [0, 1)");
  if (!(c.cql_alpha >= 0) || !std::isfinite(c.cql_alpha)) {
    r.Fail("cql_alpha", "must be a finite number >= 0");
  }
  if (c.target_update_period < 1) {
    r.Fail("target_update_period", "must be >= 1");
  }
  if (c.checkpoint_every < 0) r.Fail("checkpoint_every", "must be >= 0");
  if (c.single_abstain.folds != 0 && c.single_abstain.folds < 2) {
    r.Fail("single_abstain.folds", "must be 0 (no margin) or >= 2");
  }
  if (c.single_abstain.folds != 0 && c.formulation != "candidate") {
    r.Fail("single_abstain.folds",
           "the abstain margin is for the candidate formulation");
  }
  if (!(c.single_abstain.tolerance >= 0) ||
      !std::isfinite(c.single_abstain.tolerance)) {
    r.Fail("single_abstain.tolerance", "must be a finite number >= 0");
  }
  if (c.single_abstain.max_over_modules < 0) {
    r.Fail("single_abstain.max_over_modules", "must be >= 0");
  }
  if (c.single_abstain.candidate_max_over_modules < -1) {
    r.Fail("single_abstain.candidate_max_over_modules",
           "must be -1 (no candidate excluded) or >= 0");
  } else if (c.single_abstain.candidate_max_over_modules >= 0 &&
             c.single_abstain.folds == 0) {
    r.Fail("single_abstain.candidate_max_over_modules",
           "needs single_abstain.folds >= 2 (the margin is chosen among the "
           "candidates left, by cross-fitting)");
  }
  if (c.log_every < 0) r.Fail("log_every", "must be >= 0");
  if (!r.status().ok()) return r.status();
  return c;
}

absl::StatusOr<LearnerConfig> LoadLearnerConfig(const std::string& path) {
  const config::YamlFields fields(path,
                                  "configs/learner/size_candidate_cql.yaml");
  auto text = fields.ReadText();
  if (!text.ok()) return text.status();
  return ParseLearnerConfig(*text, path);
}

}  // namespace phaseloop::offline_rl
