#include "tools/loop/loop_config.h"

#include "common/config/yaml_fields.h"

namespace phaseloop::loop {
namespace {

constexpr char kDocs[] = "configs/loop/demo.yaml";
constexpr double kDay = 86400;

}  // namespace

absl::StatusOr<LoopConfig> LoadLoopConfig(const std::string& path) {
  const config::YamlFields fields(path, kDocs);
  auto root = fields.LoadMapping();
  if (!root.ok()) return root.status();
  if (auto s = fields.CheckKeys("", *root,
                                {"service", "learner", "workloads_dir",
                                 "iterations", "explore", "gate", "stage"});
      !s.ok()) {
    return s;
  }
  LoopConfig config;
  config.source = path;
  std::string service, learner, workloads_dir = ".";
  if (auto s = fields.Text("", *root, "service", service, true); !s.ok()) {
    return s;
  }
  if (auto s = fields.Text("", *root, "learner", learner, true); !s.ok()) {
    return s;
  }
  if (auto s = fields.Text("", *root, "workloads_dir", workloads_dir);
      !s.ok()) {
    return s;
  }
  config.service = fields.Resolve(service);
  config.learner = fields.Resolve(learner);
  config.workloads_dir = fields.Resolve(workloads_dir);
  int64_t iterations = config.iterations;
  if (auto s = fields.Int("", *root, "iterations", 1, 1000, iterations);
      !s.ok()) {
    return s;
  }
  config.iterations = static_cast<int>(iterations);

  const YAML::Node explore = (*root)["explore"];
  if (!explore) return fields.Bad("explore", "required");
  if (auto s = fields.CheckKeys(
          "explore", explore,
          {"workload", "budget_s", "confirm_budget_s", "runoff_budget_s",
           "runoff_contenders", "in_canary"});
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Text("explore", explore, "workload",
                           config.explore_workload, true);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Number("explore", explore, "budget_s", 1, kDay,
                             config.explore_budget_s);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Number("explore", explore, "confirm_budget_s", 1, kDay,
                             config.explore_confirm_budget_s);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Number("explore", explore, "runoff_budget_s", 1, kDay,
                             config.explore_runoff_budget_s);
      !s.ok()) {
    return s;
  }
  int64_t contenders = config.explore_runoff_contenders;
  if (auto s = fields.Int("explore", explore, "runoff_contenders", 0, 16,
                          contenders);
      !s.ok()) {
    return s;
  }
  config.explore_runoff_contenders = static_cast<int>(contenders);
  if (auto s = fields.Bool("explore", explore, "in_canary",
                           config.explore_in_canary);
      !s.ok()) {
    return s;
  }

  if (const YAML::Node gate = (*root)["gate"]) {
    if (auto s = fields.CheckKeys("gate", gate,
                                  {"split", "workloads", "budget_s", "timed"});
        !s.ok()) {
      return s;
    }
    if (auto s = fields.Text("gate", gate, "split", config.gate_split);
        !s.ok()) {
      return s;
    }
    if (auto s =
            fields.TextList("gate", gate, "workloads", config.gate_workloads);
        !s.ok()) {
      return s;
    }
    if (auto s = fields.Number("gate", gate, "budget_s", 1, kDay,
                               config.gate_budget_s);
        !s.ok()) {
      return s;
    }
    if (auto s = fields.Bool("gate", gate, "timed", config.gate_timed);
        !s.ok()) {
      return s;
    }
  }

  const YAML::Node stage = (*root)["stage"];
  if (!stage) return fields.Bad("stage", "required");
  if (auto s = fields.CheckKeys("stage", stage, {"workload", "budget_s"});
      !s.ok()) {
    return s;
  }
  if (auto s =
          fields.Text("stage", stage, "workload", config.stage_workload, true);
      !s.ok()) {
    return s;
  }
  if (auto s = fields.Number("stage", stage, "budget_s", 1, kDay,
                             config.stage_budget_s);
      !s.ok()) {
    return s;
  }
  return config;
}

}  // namespace phaseloop::loop
