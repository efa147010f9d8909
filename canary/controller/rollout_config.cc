#include "canary/controller/rollout_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_keys.h"

namespace phaseloop::canary {
namespace {

absl::Status Bad(const std::string& source, const std::string& field,
                 const std::string& problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": rollout.", field, ": ", problem,
                   " (see configs/services/demo.yaml)"));
}

absl::Status CheckKeys(const std::string& source, const std::string& field,
                       const YAML::Node& node,
                       const std::set<std::string>& allowed) {
  for (const auto& entry : node) {
    const std::string key = config::MappingKeyText(entry.first);
    if (allowed.count(key)) continue;
    return Bad(source, field.empty() ? key : absl::StrCat(field, ".", key),
               absl::StrCat("unknown field; expected one of: ",
                            absl::StrJoin(allowed, ", ")));
  }
  return absl::OkStatus();
}

// node[key] as a number in [lo, hi] when present (else `out` unchanged).
absl::Status ReadNumber(const std::string& source, const std::string& field,
                        const YAML::Node& node, const std::string& key,
                        double lo, double hi, double& out) {
  const YAML::Node value_node = node[key];
  if (!value_node) return absl::OkStatus();
  const std::string name = field.empty() ? key : field + "." + key;
  double value = 0;
  if (!value_node.IsScalar() ||
      !YAML::convert<double>::decode(value_node, value) ||
      !std::isfinite(value)) {
    return Bad(source, name, "expected a number");
  }
  if (value < lo || value > hi) {
    return Bad(source, name,
               absl::StrCat(value, " is outside [", lo, ", ", hi, "]"));
  }
  out = value;
  return absl::OkStatus();
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

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
  errors.allowed_increase = 1.0;
  judge.metrics["error_rate"] = errors;
  judge.source = "built-in rollout judge (configs/canary/rollout_judge.yaml)";
  return judge;
}

absl::StatusOr<RolloutConfig> ParseRolloutConfig(const YAML::Node& node,
                                                 const std::string& source) {
  RolloutConfig config;
  config.judge = DefaultRolloutJudge();
  if (!node || node.IsNull()) {
    return Bad(source, "steps", "a rollout needs at least one step");
  }
  if (!node.IsMap()) return Bad(source, "", "rollout must be a mapping");
  if (auto s = CheckKeys(source, "", node,
                         {"steps", "warmup_s", "max_extension_s", "extension_s",
                          "judge", "pass_bonus", "fail_penalty",
                          "unproven_at_max"});
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
    if (auto s = ReadNumber(source, "", node, number.key, number.lo, number.hi,
                            *number.out);
        !s.ok()) {
      return s;
    }
  }
  if (const YAML::Node n = node["unproven_at_max"]; n) {
    const std::string text = n.IsScalar() ? n.Scalar() : "";
    if (text != "pass" && text != "rollback") {
      return Bad(source, "unproven_at_max",
                 absl::StrCat("\"", text,
                              "\" is not a choice; use pass (an unproven rise "
                              "passes at a step's maximum) or rollback"));
    }
    config.pass_unproven_at_max = text == "pass";
  }
  const YAML::Node steps = node["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0) {
    return Bad(source, "steps",
               "expected a list of {weight, duration_s}, e.g. "
               "[{weight: 0.05, duration_s: 30}]");
  }
  double previous_weight = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string field = absl::StrCat("steps[", i, "]");
    const YAML::Node step = steps[i];
    if (!step.IsMap() || !step["weight"] || !step["duration_s"]) {
      return Bad(source, field, "expected {weight: W, duration_s: S}");
    }
    if (auto s = CheckKeys(source, field, step, {"weight", "duration_s"});
        !s.ok()) {
      return s;
    }
    double weight = 0, duration_s = 0;
    if (auto s = ReadNumber(source, field, step, "weight", 1e-4, 0.5, weight);
        !s.ok()) {
      return s;
    }
    if (auto s =
            ReadNumber(source, field, step, "duration_s", 1, 86400, duration_s);
        !s.ok()) {
      return s;
    }
    if (weight < previous_weight) {
      return Bad(source, field + ".weight",
                 absl::StrCat(weight, " is below the step before it (",
                              previous_weight, "); a rollout only widens"));
    }
    if (duration_s <= config.warmup_s) {
      return Bad(source, field + ".duration_s",
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
  if (const YAML::Node judge = node["judge"]) {
    if (!judge.IsScalar() || judge.Scalar().empty()) {
      return Bad(source, "judge", "expected a path to a judge YAML file");
    }
    std::string path = judge.Scalar();
    if (path[0] != '/') path = DirectoryOf(source) + "/" + path;
    auto loaded = LoadJudgeConfig(path);
    if (!loaded.ok()) {
      return Bad(source, "judge", std::string(loaded.status().message()));
    }
    config.judge = *std::move(loaded);
  }
  return config;
}

}  // namespace phaseloop::canary
