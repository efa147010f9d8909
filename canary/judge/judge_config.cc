#include "canary/judge/judge_config.h"

#include <yaml-cpp/yaml.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/config/yaml_fields.h"

namespace phaseloop::canary {
namespace {

using config::NumberRange;

constexpr char kDocs[] = "configs/canary/judge.yaml";

absl::Status ReadRule(const config::YamlFields& fields,
                      const std::string& prefix, const YAML::Node& node,
                      MetricRule& rule) {
  if (auto s = fields.CheckKeys(
          prefix, node,
          {"direction", "percentile", "allowed_increase", "allowed_decrease",
           "critical", "weight", "slo_p95", "min_samples"});
      !s.ok()) {
    return s;
  }
  std::string direction = DirectionName(rule.direction);
  if (auto s = fields.Choice(prefix, node, "direction",
                             {{"increase", "higher is worse, e.g. latency"},
                              {"decrease", "lower is worse, e.g. throughput"},
                              {"either", ""}},
                             direction);
      !s.ok()) {
    return s;
  }
  rule.direction = direction == "increase"   ? Direction::kIncrease
                   : direction == "decrease" ? Direction::kDecrease
                                             : Direction::kEither;
  if (auto s = fields.Number(prefix, node, "percentile",
                             NumberRange::Between(0, 100), rule.percentile);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Number(prefix, node, "allowed_increase",
                             NumberRange::AtLeast(1), rule.allowed_increase);
      !s.ok()) {
    return s;
  }
  if (auto s =
          fields.Number(prefix, node, "allowed_decrease",
                        NumberRange::AboveUpTo(0, 1), rule.allowed_decrease);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Number(prefix, node, "weight", NumberRange::Above(0),
                             rule.weight);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Bool(prefix, node, "critical", rule.critical); !s.ok()) {
    return s;
  }
  // slo_p95 and min_samples: null means "none" / "the top level's".
  if (const YAML::Node slo = node["slo_p95"]; slo && slo.IsNull()) {
    rule.slo_p95.reset();
  } else if (slo) {
    double threshold = 0;
    if (auto s = fields.Number(prefix, node, "slo_p95", NumberRange::Above(0),
                               threshold);
        !s.ok()) {
      return s;
    }
    rule.slo_p95 = threshold;
  }
  if (const YAML::Node n = node["min_samples"]; n && n.IsNull()) {
    rule.min_samples.reset();
  } else if (n) {
    int min_samples = 0;
    if (auto s = fields.Int(prefix, node, "min_samples", 2,
                            config::YamlFields::kNoUpperEnd, min_samples);
        !s.ok()) {
      return s;
    }
    rule.min_samples = min_samples;
  }
  return absl::OkStatus();
}

}  // namespace

std::string DirectionName(Direction direction) {
  switch (direction) {
    case Direction::kIncrease:
      return "increase";
    case Direction::kDecrease:
      return "decrease";
    case Direction::kEither:
      return "either";
  }
  return "unknown";
}

const MetricRule& JudgeConfig::RuleFor(const std::string& name) const {
  auto it = metrics.find(name);
  return it == metrics.end() ? defaults : it->second;
}

absl::StatusOr<JudgeConfig> ParseJudgeConfigYaml(const std::string& text,
                                                 const std::string& source) {
  const config::YamlFields fields(source, kDocs);
  auto root = fields.Parse(text);
  if (!root.ok()) return root.status();
  JudgeConfig config;
  config.source = source;
  if (!*root || root->IsNull()) return config;  // an empty file: the defaults
  if (auto s = fields.CheckKeys("", *root,
                                {"confidence", "min_samples", "score",
                                 "unproven_change", "defaults", "metrics"});
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Number("", *root, "confidence",
                             NumberRange::Between(0, 1), config.confidence);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Int("", *root, "min_samples", 2,
                          config::YamlFields::kNoUpperEnd, config.min_samples);
      !s.ok()) {
    return s;
  }
  std::string unproven =
      config.unproven_change == UnprovenChange::kPass ? "pass" : "inconclusive";
  if (auto s = fields.Choice("", *root, "unproven_change",
                             {{"inconclusive", "more data needed"},
                              {"pass", "no significant change passes"}},
                             unproven);
      !s.ok()) {
    return s;
  }
  config.unproven_change = unproven == "pass" ? UnprovenChange::kPass
                                              : UnprovenChange::kInconclusive;
  if (const YAML::Node score = (*root)["score"]; score) {
    if (auto s = fields.CheckKeys("score", score, {"pass", "marginal"});
        !s.ok()) {
      return s;
    }
    if (auto s =
            fields.Number("score", score, "pass", 0, 100, config.pass_score);
        !s.ok()) {
      return s;
    }
    if (auto s = fields.Number("score", score, "marginal", 0, 100,
                               config.marginal_score);
        !s.ok()) {
      return s;
    }
    if (config.marginal_score > config.pass_score) {
      return fields.Bad(
          "score.marginal",
          absl::StrCat(config.marginal_score, " is above score.pass (",
                       config.pass_score, "); marginal must be at most pass"));
    }
  }
  if (const YAML::Node defaults = (*root)["defaults"]; defaults) {
    if (auto s = ReadRule(fields, "defaults", defaults, config.defaults);
        !s.ok()) {
      return s;
    }
  }
  if (const YAML::Node metrics = (*root)["metrics"]; metrics) {
    if (!metrics.IsMap()) {
      return fields.Bad("metrics",
                        "expected a mapping of metric name to its rule");
    }
    for (const auto& entry : metrics) {
      if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
        return fields.Bad("metrics", "a metric has no name");
      }
      const std::string name = entry.first.Scalar();
      if (config.metrics.count(name)) {
        return fields.Bad("metrics." + name, "given twice; keep one");
      }
      MetricRule rule = config.defaults;
      if (!entry.second.IsNull()) {
        if (auto s = ReadRule(fields, "metrics." + name, entry.second, rule);
            !s.ok()) {
          return s;
        }
      }
      config.metrics[name] = rule;
    }
  }
  return config;
}

absl::StatusOr<JudgeConfig> LoadJudgeConfig(const std::string& path) {
  const config::YamlFields fields(path, kDocs);
  auto text = fields.ReadText();
  if (!text.ok()) return text.status();
  return ParseJudgeConfigYaml(*text, path);
}

}  // namespace phaseloop::canary
