#include "tools/loop/loop_config.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/config/yaml_fields.h"
#include "staging_harness/workloads/workload.h"
#include "staging_harness/workloads/workload_files.h"

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
    if (auto s = fields.Choice(
            "gate", gate, "split",
            {{"test", "the held-out workloads (the publish gate's own)"},
             {"train", "the workloads the learner may see"}},
            config.gate_split);
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

absl::Status CheckGateWorkloads(const LoopConfig& config,
                                const std::string& path) {
  const config::YamlFields fields(path, kDocs);
  std::map<std::string, std::string> split_of;  // workload name -> split
  for (const std::string& file :
       workloads::ListWorkloadFiles(config.workloads_dir)) {
    absl::StatusOr<workloads::Workload> workload =
        workloads::LoadWorkload(file);
    if (!workload.ok()) {
      return fields.InFile(
          "workloads_dir",
          absl::InvalidArgumentError(absl::StrCat(
              workload.status().message(),
              " (the publish gate loads every workload file here)")));
    }
    split_of[workload->name] = workloads::SplitName(workload->split);
  }
  const bool any = std::any_of(
      split_of.begin(), split_of.end(),
      [&](const auto& entry) { return entry.second == config.gate_split; });
  if (!any) {
    return fields.Bad("gate.split",
                      absl::StrCat("no workload of split '", config.gate_split,
                                   "' under ", config.workloads_dir));
  }
  for (const std::string& name : config.gate_workloads) {
    auto found = split_of.find(name);
    if (found != split_of.end() && found->second != config.gate_split) {
      return fields.Bad(
          "gate.workloads",
          absl::StrCat("'", name, "' is a ", found->second,
                       " workload; the gate stages split '", config.gate_split,
                       "': name one of that split's workloads"));
    }
    if (found == split_of.end()) {
      return fields.Bad("gate.workloads",
                        absl::StrCat("no workload named '", name, "' under ",
                                     config.workloads_dir));
    }
  }
  return absl::OkStatus();
}

}  // namespace phaseloop::loop
