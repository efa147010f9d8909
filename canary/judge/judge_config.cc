#include "canary/judge/judge_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_keys.h"

namespace phaseloop::canary {
namespace {

constexpr char kSeeFile[] = "see configs/canary/judge.yaml";

absl::Status Bad(const std::string& source, const std::string& field,
                 const std::string& problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", field, ": ", problem, " (", kSeeFile, ")"));
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

absl::StatusOr<double> Number(const std::string& source,
                              const std::string& field,
                              const YAML::Node& node) {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) ||
      !std::isfinite(value)) {
    return Bad(
        source, field,
        absl::StrCat("expected a number, got \"",
                     node.IsScalar() ? node.Scalar() : "a collection", "\""));
  }
  return value;
}

// Sets `out` from node[key] when present, checking lo < value < hi (or <=
// when the bound is inclusive).
absl::Status ReadNumber(const std::string& source, const std::string& prefix,
                        const YAML::Node& node, const std::string& key,
                        double lo, bool lo_inclusive, double hi,
                        bool hi_inclusive, double& out) {
  const YAML::Node value_node = node[key];
  if (!value_node) return absl::OkStatus();
  const std::string field = prefix.empty() ? key : prefix + "." + key;
  auto value = Number(source, field, value_node);
  if (!value.ok()) return value.status();
  const bool above = lo_inclusive ? *value >= lo : *value > lo;
  const bool below = hi_inclusive ? *value <= hi : *value < hi;
  if (!above || !below) {
    return Bad(source, field,
               absl::StrCat(*value, " is outside ", lo_inclusive ? "[" : "(",
                            lo, ", ", hi, hi_inclusive ? "]" : ")"));
  }
  out = *value;
  return absl::OkStatus();
}

absl::Status ReadRule(const std::string& source, const std::string& prefix,
                      const YAML::Node& node, MetricRule& rule) {
  if (!node.IsMap()) return Bad(source, prefix, "must be a mapping");
  if (auto s = CheckKeys(source, prefix, node,
                         {"direction", "percentile", "allowed_increase",
                          "allowed_decrease", "critical", "weight", "slo_p95",
                          "min_samples"});
      !s.ok()) {
    return s;
  }
  if (const YAML::Node d = node["direction"]; d) {
    const std::string text = d.IsScalar() ? d.Scalar() : "";
    if (text == "increase") {
      rule.direction = Direction::kIncrease;
    } else if (text == "decrease") {
      rule.direction = Direction::kDecrease;
    } else if (text == "either") {
      rule.direction = Direction::kEither;
    } else {
      return Bad(source, prefix + ".direction",
                 absl::StrCat("\"", text,
                              "\" is not a direction; use increase (higher "
                              "is worse, e.g. latency), decrease (lower is "
                              "worse, e.g. throughput) or either"));
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (auto s = ReadNumber(source, prefix, node, "percentile", 0, false, 100,
                          false, rule.percentile);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadNumber(source, prefix, node, "allowed_increase", 1, true,
                          kInf, false, rule.allowed_increase);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadNumber(source, prefix, node, "allowed_decrease", 0, false, 1,
                          true, rule.allowed_decrease);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadNumber(source, prefix, node, "weight", 0, false, kInf, false,
                          rule.weight);
      !s.ok()) {
    return s;
  }
  if (const YAML::Node c = node["critical"]; c) {
    bool critical = false;
    if (!c.IsScalar() || !YAML::convert<bool>::decode(c, critical)) {
      return Bad(source, prefix + ".critical", "expected true or false");
    }
    rule.critical = critical;
  }
  if (const YAML::Node slo = node["slo_p95"]; slo) {
    if (slo.IsNull()) {
      rule.slo_p95.reset();
    } else {
      double threshold = 0;
      if (auto s = ReadNumber(source, prefix, node, "slo_p95", 0, false, kInf,
                              false, threshold);
          !s.ok()) {
        return s;
      }
      rule.slo_p95 = threshold;
    }
  }
  if (const YAML::Node n = node["min_samples"]; n) {
    int min_samples = 0;
    if (n.IsNull()) {
      rule.min_samples.reset();
    } else if (!n.IsScalar() || !YAML::convert<int>::decode(n, min_samples) ||
               min_samples < 2) {
      return Bad(source, prefix + ".min_samples",
                 "expected a whole number >= 2 (or null for the top level's)");
    } else {
      rule.min_samples = min_samples;
    }
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
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not valid YAML: ", e.what()));
  }
  JudgeConfig config;
  config.source = source;
  if (!root || root.IsNull()) return config;  // an empty file: the defaults
  if (!root.IsMap()) return Bad(source, "(top level)", "must be a mapping");
  if (auto s = CheckKeys(
          source, "", root,
          {"confidence", "min_samples", "score", "unproven_change",
           "defaults", "metrics"});
      !s.ok()) {
    return s;
  }
  if (auto s = ReadNumber(source, "", root, "confidence", 0, false, 1, false,
                          config.confidence);
      !s.ok()) {
    return s;
  }
  if (const YAML::Node n = root["min_samples"]; n) {
    int min_samples = 0;
    if (!n.IsScalar() || !YAML::convert<int>::decode(n, min_samples) ||
        min_samples < 2) {
      return Bad(source, "min_samples",
                 "expected a whole number of at least 2 (the rank test "
                 "needs samples on both sides)");
    }
    config.min_samples = min_samples;
  }
  if (const YAML::Node n = root["unproven_change"]; n) {
    const std::string text = n.IsScalar() ? n.Scalar() : "";
    if (text == "inconclusive") {
      config.unproven_change = UnprovenChange::kInconclusive;
    } else if (text == "pass") {
      config.unproven_change = UnprovenChange::kPass;
    } else {
      return Bad(source, "unproven_change",
                 absl::StrCat("\"", text,
                              "\" is not a choice; use inconclusive (more "
                              "data needed) or pass (no significant change "
                              "passes)"));
    }
  }
  if (const YAML::Node score = root["score"]; score) {
    if (!score.IsMap()) return Bad(source, "score", "must be a mapping");
    if (auto s = CheckKeys(source, "score", score, {"pass", "marginal"});
        !s.ok()) {
      return s;
    }
    if (auto s = ReadNumber(source, "score", score, "pass", 0, true, 100, true,
                            config.pass_score);
        !s.ok()) {
      return s;
    }
    if (auto s = ReadNumber(source, "score", score, "marginal", 0, true, 100,
                            true, config.marginal_score);
        !s.ok()) {
      return s;
    }
    if (config.marginal_score > config.pass_score) {
      return Bad(
          source, "score.marginal",
          absl::StrCat(config.marginal_score, " is above score.pass (",
                       config.pass_score, "); marginal must be at most pass"));
    }
  }
  if (const YAML::Node defaults = root["defaults"]; defaults) {
    if (auto s = ReadRule(source, "defaults", defaults, config.defaults);
        !s.ok()) {
      return s;
    }
  }
  if (const YAML::Node metrics = root["metrics"]; metrics) {
    if (!metrics.IsMap()) {
      return Bad(source, "metrics",
                 "must be a mapping of metric name to its rule");
    }
    for (const auto& entry : metrics) {
      if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
        return Bad(source, "metrics", "a metric has no name");
      }
      const std::string name = entry.first.Scalar();
      MetricRule rule = config.defaults;
      if (!entry.second.IsNull()) {
        if (auto s = ReadRule(source, "metrics." + name, entry.second, rule);
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
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read judge config ", path,
        "; give an existing file (e.g. configs/canary/judge.yaml)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseJudgeConfigYaml(text.str(), path);
}

}  // namespace phaseloop::canary
