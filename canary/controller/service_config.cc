#include "canary/controller/service_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "canary/load/load_spec_yaml.h"
#include "canary/service/check_requests.h"
#include "common/config/yaml_fields.h"

namespace phaseloop::canary {

absl::StatusOr<ServiceConfig> LoadServiceConfig(const std::string& path) {
  const config::YamlFields fields(path, "configs/services/demo.yaml");
  auto loaded = fields.LoadMapping();
  if (!loaded.ok()) return loaded.status();
  const YAML::Node& root = *loaded;
  if (auto s =
          fields.CheckKeys("", root,
                           {"service", "slo_dir", "handler", "instances",
                            "rewards", "load", "rollout", "budget_policy"});
      !s.ok()) {
    return s;
  }
  ServiceConfig config;
  config.source = path;
  if (auto s = fields.Text("", root, "service", config.service, true);
      !s.ok()) {
    return s;
  }
  std::string slo_dir;
  if (auto s = fields.Text("", root, "slo_dir", slo_dir, true); !s.ok()) {
    return s;
  }
  config.slo_dir = fields.Resolve(slo_dir);

  const YAML::Node handler = root["handler"];
  if (!handler) return fields.Bad("handler", "required");
  if (auto s = fields.CheckKeys("handler", handler,
                                {"workspace", "zlib", "opt_level"});
      !s.ok()) {
    return s;
  }
  std::string workspace, zlib;
  if (auto s = fields.Text("handler", handler, "workspace", workspace, true);
      !s.ok()) {
    return s;
  }
  config.handler_workspace = fields.Resolve(workspace);
  if (auto s = fields.Text("handler", handler, "zlib", zlib, true); !s.ok()) {
    return s;
  }
  config.handler_zlib =
      absl::StartsWith(zlib, "debian:") ? zlib : fields.Resolve(zlib);
  if (auto s = fields.Choice(
          "handler", handler, "opt_level",
          {{"O1", ""}, {"O2", "a speed policy acts at O2 and O3"}, {"O3", ""}},
          config.handler_opt_level);
      !s.ok()) {
    return s;
  }

  if (const YAML::Node instances = root["instances"]) {
    if (auto s = fields.CheckKeys("instances", instances,
                                  {"threads", "sli_window_ms"});
        !s.ok()) {
      return s;
    }
    if (auto s = fields.Int("instances", instances, "threads", 1, 256,
                            config.instance_threads);
        !s.ok()) {
      return s;
    }
    if (auto s = fields.Int("instances", instances, "sli_window_ms", 100,
                            600000, config.sli_window_ms);
        !s.ok()) {
      return s;
    }
  }
  if (const YAML::Node rewards = root["rewards"]) {
    if (auto s = fields.CheckKeys(
            "rewards", rewards,
            {"window_ms", "lateness_ms", "close_idle_ms", "idle_ms"});
        !s.ok()) {
      return s;
    }
    // The reward engine's --window-ms, --lateness-ms, --close-idle-ms and
    // --idle-ms (idle_ms was once accepted and never read).
    const struct {
      const char* key;
      int64_t lo;
      int64_t* out;
    } durations[] = {
        {"window_ms", 100, &config.reward_window_ms},
        {"lateness_ms", 0, &config.reward_lateness_ms},
        {"close_idle_ms", 0, &config.reward_close_idle_ms},
        {"idle_ms", 0, &config.reward_idle_ms},
    };
    for (const auto& duration : durations) {
      if (auto s = fields.Int("rewards", rewards, duration.key, duration.lo,
                              3600000, *duration.out);
          !s.ok()) {
        return s;
      }
    }
  }
  if (config.reward_window_ms % config.sli_window_ms != 0) {
    return fields.Bad(
        "rewards.window_ms",
        absl::StrCat(config.reward_window_ms,
                     " is not a multiple of instances.sli_window_ms ",
                     config.sli_window_ms,
                     " (a reward window merges whole SLI windows)"));
  }

  if (!root["load"] || !root["load"].IsMap()) {
    return fields.Bad("load", "the service needs a load mapping");
  }
  YAML::Node load_node = YAML::Clone(root["load"]);
  if (load_node["duration_s"] || load_node["max_requests"]) {
    return fields.Bad("load",
                      "leave duration_s and max_requests out: a canary's load "
                      "runs as long as its steps");
  }
  // The load parser asks every run for a bound; a canary's is its steps,
  // set when the load starts.
  load_node["duration_s"] = 1;
  auto load = load::LoadSpecFromYaml(load_node, path);
  if (!load.ok()) return load.status();
  // The demo handler answers these kinds alone: any other was a 404 for
  // every request, and the run aborted minutes later for "no data".
  const std::vector<std::string>& kinds = DemoKinds();
  for (size_t i = 0; i < load->mix.size(); ++i) {
    if (std::find(kinds.begin(), kinds.end(), load->mix[i].kind) ==
        kinds.end()) {
      return fields.Bad(
          absl::StrCat("load.mix[", i, "].kind"),
          absl::StrCat("'", load->mix[i].kind,
                       "' is not a kind the demo handler serves (",
                       absl::StrJoin(kinds, ", "), ")"));
    }
  }
  config.load = *std::move(load);
  config.load.duration_s = 0;

  auto rollout = ParseRolloutConfig(root["rollout"], path);
  if (!rollout.ok()) return rollout.status();
  config.rollout = *std::move(rollout);

  std::string budget_path;
  if (auto s = fields.Text("", root, "budget_policy", budget_path, true);
      !s.ok()) {
    return s;
  }
  auto budget = LoadBudgetPolicy(fields.Resolve(budget_path));
  if (!budget.ok()) {
    return fields.InFile("budget_policy", budget.status());
  }
  config.budget_policy = *std::move(budget);
  return config;
}

}  // namespace phaseloop::canary
