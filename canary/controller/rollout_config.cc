#include "canary/controller/rollout_config.h"

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "common/config/yaml_fields.h"

namespace phaseloop::canary {
namespace {

// Every field of a service file's rollout is named under "rollout.".
constexpr char kPrefix[] = "rollout";

}  // namespace

JudgeConfig DefaultRolloutJudge() {
  JudgeConfig judge;
  judge.confidence = 0.99;
  judge.min_samples = 8;
  judge.pass_score = 95;
  judge.marginal_score = 75;
  MetricRule window_rule;
  window_rule.direction = Direction::kIncrease;
  window_rule.percentile = 50;
  window_rule.allowed_increase = 1.05;
  window_rule.critical = true;
  judge.defaults = window_rule;
  MetricRule latency = window_rule;
  latency.percentile = 95;
  latency.min_samples = 300;
  judge.metrics["latency_ms"] = latency;
  MetricRule median = latency;
  median.percentile = 50;
  judge.metrics["latency_median_ms"] = median;
  MetricRule errors = window_rule;
  errors.percentile = 95;
  errors.allowed_increase = 1.0;
  judge.metrics["error_rate"] = errors;
  judge.source = "built-in rollout judge (configs/canary/rollout_judge.yaml)";
  return judge;
}

absl::StatusOr<RolloutConfig> ParseRolloutConfig(const YAML::Node& node,
                                                 const std::string& source) {
  const config::YamlFields fields(source, "configs/services/demo.yaml");
  RolloutConfig config;
  config.judge = DefaultRolloutJudge();
  if (!node || node.IsNull()) {
    return fields.Bad("rollout.steps", "a rollout needs at least one step");
  }
  if (auto s = fields.CheckKeys(
          kPrefix, node,
          {"steps", "warmup_s", "max_extension_s", "extension_s", "judge",
           "pass_bonus", "fail_penalty", "unproven_at_max"});
      !s.ok()) {
    return s;
  }
  // The scalar fields and their ranges.
  const struct {
    const char* key;
    double lo, hi;
    double* out;
  } numbers[] = {
      {"warmup_s", 0, 3600, &config.warmup_s},
      {"max_extension_s", 0, 3600, &config.max_extension_s},
      {"extension_s", 1, 3600, &config.extension_s},
      {"pass_bonus", 0, 1, &config.pass_bonus},
      {"fail_penalty", 0, 10, &config.fail_penalty},
  };
  for (const auto& number : numbers) {
    if (auto s = fields.Number(kPrefix, node, number.key, number.lo, number.hi,
                               *number.out);
        !s.ok()) {
      return s;
    }
  }
  std::string unproven = config.pass_unproven_at_max ? "pass" : "rollback";
  if (auto s = fields.Choice(
          kPrefix, node, "unproven_at_max",
          {{"pass", "an unproven rise passes at a step's maximum"},
           {"rollback", ""}},
          unproven);
      !s.ok()) {
    return s;
  }
  config.pass_unproven_at_max = unproven == "pass";
  const YAML::Node steps = node["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0) {
    return fields.Bad("rollout.steps",
                      "expected a list of {weight, duration_s}, e.g. "
                      "[{weight: 0.05, duration_s: 30}]");
  }
  double previous_weight = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string field = absl::StrCat("rollout.steps[", i, "]");
    const YAML::Node step = steps[i];
    if (!step.IsMap() || !step["weight"] || !step["duration_s"]) {
      return fields.Bad(field, "expected {weight: W, duration_s: S}");
    }
    if (auto s = fields.CheckKeys(field, step, {"weight", "duration_s"});
        !s.ok()) {
      return s;
    }
    double weight = 0, duration_s = 0;
    if (auto s = fields.Number(field, step, "weight", 1e-4, 0.5, weight);
        !s.ok()) {
      return s;
    }
    if (auto s = fields.Number(field, step, "duration_s", 1, 86400, duration_s);
        !s.ok()) {
      return s;
    }
    if (weight < previous_weight) {
      return fields.Bad(
          field + ".weight",
          absl::StrCat(weight, " is below the step before it (",
                       previous_weight, "); a rollout only widens"));
    }
    if (duration_s <= config.warmup_s) {
      return fields.Bad(field + ".duration_s",
                        absl::StrCat(duration_s,
                                     " s leaves nothing to judge after "
                                     "warmup_s ",
                                     config.warmup_s, " s"));
    }
    previous_weight = weight;
    v1::CanaryStepPlan plan;
    plan.set_index(static_cast<int32_t>(i));
    plan.set_canary_weight(weight);
    plan.set_duration_ms(static_cast<int64_t>(duration_s * 1000));
    plan.set_warmup_ms(static_cast<int64_t>(config.warmup_s * 1000));
    plan.set_max_duration_ms(
        static_cast<int64_t>((duration_s + config.max_extension_s) * 1000));
    config.steps.push_back(plan);
  }
  std::string judge_path;
  if (auto s = fields.Text(kPrefix, node, "judge", judge_path); !s.ok()) {
    return fields.Bad("rollout.judge", "expected a path to a judge YAML file");
  }
  if (!judge_path.empty()) {
    auto loaded = LoadJudgeConfig(fields.Resolve(judge_path));
    if (!loaded.ok()) {
      return fields.InFile("rollout.judge", loaded.status());
    }
    config.judge = *std::move(loaded);
  }
  return config;
}

}  // namespace phaseloop::canary
