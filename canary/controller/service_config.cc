#include "canary/controller/service_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "canary/load/load_spec_yaml.h"
#include "common/config/yaml_keys.h"

namespace phaseloop::canary {
namespace {

absl::Status Bad(const std::string& source, const std::string& field,
                 const std::string& problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", field, ": ", problem,
                   " (configs/services/demo.yaml documents every field)"));
}

absl::Status CheckKeys(const std::string& source, const std::string& prefix,
                       const YAML::Node& node,
                       const std::set<std::string>& allowed) {
  for (const auto& entry : node) {
    const std::string key = config::MappingKeyText(entry.first);
    if (allowed.count(key)) continue;
    return Bad(source, prefix.empty() ? key : prefix + "." + key,
               absl::StrCat("unknown field; expected one of: ",
                            absl::StrJoin(allowed, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Text(const std::string& source,
                                 const std::string& field,
                                 const YAML::Node& node) {
  if (!node || !node.IsScalar() || node.Scalar().empty()) {
    return Bad(source, field, "expected a non-empty string");
  }
  return node.Scalar();
}

// node[key] as a whole number in [lo, hi] when present.
template <typename Int>
absl::Status ReadInt(const std::string& source, const std::string& prefix,
                     const YAML::Node& node, const std::string& key, int64_t lo,
                     int64_t hi, Int& out) {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  const std::string field = prefix + "." + key;
  double number = 0;
  if (!value.IsScalar() || !YAML::convert<double>::decode(value, number) ||
      number != std::floor(number)) {
    return Bad(source, field, "expected a whole number");
  }
  if (number < lo || number > hi) {
    return Bad(source, field,
               absl::StrCat(number, " is outside [", lo, ", ", hi, "]"));
  }
  out = static_cast<Int>(number);
  return absl::OkStatus();
}

std::string Resolve(const std::string& source, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const size_t slash = source.rfind('/');
  return (slash == std::string::npos ? std::string(".")
                                     : source.substr(0, slash)) +
         "/" + path;
}

}  // namespace

absl::StatusOr<ServiceConfig> LoadServiceConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the service file ", path,
                     " (configs/services/demo.yaml is the demo service's)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not valid YAML: ", e.what()));
  }
  if (!root.IsMap()) return Bad(path, "(top)", "expected a mapping");
  if (auto s = CheckKeys(path, "", root,
                         {"service", "slo_dir", "handler", "instances",
                          "rewards", "load", "rollout", "budget_policy"});
      !s.ok()) {
    return s;
  }
  ServiceConfig config;
  config.source = path;
  auto service = Text(path, "service", root["service"]);
  if (!service.ok()) return service.status();
  config.service = *service;
  auto slo_dir = Text(path, "slo_dir", root["slo_dir"]);
  if (!slo_dir.ok()) return slo_dir.status();
  config.slo_dir = Resolve(path, *slo_dir);

  const YAML::Node handler = root["handler"];
  if (!handler || !handler.IsMap()) {
    return Bad(path, "handler", "expected {workspace, zlib, opt_level}");
  }
  if (auto s = CheckKeys(path, "handler", handler,
                         {"workspace", "zlib", "opt_level"});
      !s.ok()) {
    return s;
  }
  auto workspace = Text(path, "handler.workspace", handler["workspace"]);
  if (!workspace.ok()) return workspace.status();
  config.handler_workspace = Resolve(path, *workspace);
  auto zlib = Text(path, "handler.zlib", handler["zlib"]);
  if (!zlib.ok()) return zlib.status();
  config.handler_zlib =
      absl::StartsWith(*zlib, "debian:") ? *zlib : Resolve(path, *zlib);
  if (handler["opt_level"]) {
    auto level = Text(path, "handler.opt_level", handler["opt_level"]);
    if (!level.ok()) return level.status();
    static const std::set<std::string> kLevels = {"O1", "O2", "O3"};
    if (!kLevels.count(*level)) {
      return Bad(path, "handler.opt_level",
                 absl::StrCat("'", *level,
                              "': a speed policy acts at O2/O3 (O1 allowed)"));
    }
    config.handler_opt_level = *level;
  }

  if (const YAML::Node instances = root["instances"]) {
    if (!instances.IsMap()) return Bad(path, "instances", "expected a mapping");
    if (auto s = CheckKeys(path, "instances", instances,
                           {"threads", "sli_window_ms"});
        !s.ok()) {
      return s;
    }
    if (auto s = ReadInt(path, "instances", instances, "threads", 1, 256,
                         config.instance_threads);
        !s.ok()) {
      return s;
    }
    if (auto s = ReadInt(path, "instances", instances, "sli_window_ms", 100,
                         600000, config.sli_window_ms);
        !s.ok()) {
      return s;
    }
  }
  if (const YAML::Node rewards = root["rewards"]) {
    if (!rewards.IsMap()) return Bad(path, "rewards", "expected a mapping");
    if (auto s =
            CheckKeys(path, "rewards", rewards,
                      {"window_ms", "lateness_ms", "close_idle_ms", "idle_ms"});
        !s.ok()) {
      return s;
    }
    if (auto s = ReadInt(path, "rewards", rewards, "window_ms", 100, 3600000,
                         config.reward_window_ms);
        !s.ok()) {
      return s;
    }
    if (auto s = ReadInt(path, "rewards", rewards, "lateness_ms", 0, 3600000,
                         config.reward_lateness_ms);
        !s.ok()) {
      return s;
    }
    if (auto s = ReadInt(path, "rewards", rewards, "close_idle_ms", 0, 3600000,
                         config.reward_close_idle_ms);
        !s.ok()) {
      return s;
    }
  }
  if (config.reward_window_ms % config.sli_window_ms != 0) {
    return Bad(path, "rewards.window_ms",
               absl::StrCat(config.reward_window_ms,
                            " is not a multiple of instances.sli_window_ms ",
                            config.sli_window_ms,
                            " (a reward window merges whole SLI windows)"));
  }

  if (!root["load"] || !root["load"].IsMap()) {
    return Bad(path, "load", "the service needs a load mapping");
  }
  YAML::Node load_node = YAML::Clone(root["load"]);
  if (load_node["duration_s"] || load_node["max_requests"]) {
    return Bad(path, "load",
               "leave duration_s and max_requests out: a canary's load runs "
               "as long as its steps");
  }
  // The load parser asks every run for a bound; a canary's is its steps,
  // set when the load starts.
  load_node["duration_s"] = 1;
  auto load = load::LoadSpecFromYaml(load_node, path);
  if (!load.ok()) return load.status();
  config.load = *std::move(load);
  config.load.duration_s = 0;

  auto rollout = ParseRolloutConfig(root["rollout"], path);
  if (!rollout.ok()) return rollout.status();
  config.rollout = *std::move(rollout);

  auto budget_path = Text(path, "budget_policy", root["budget_policy"]);
  if (!budget_path.ok()) return budget_path.status();
  auto budget = LoadBudgetPolicy(Resolve(path, *budget_path));
  if (!budget.ok()) {
    return Bad(path, "budget_policy", std::string(budget.status().message()));
  }
  config.budget_policy = *std::move(budget);
  return config;
}

}  // namespace phaseloop::canary
