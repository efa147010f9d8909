#include "tools/loop/loop_stages.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "canary/controller/canary_state_store.h"
#include "nlohmann/json.hpp"
#include "offline_rl/learner/gate_metrics.h"
#include "tools/loop/build_figures.h"
#include "tools/loop/lab_stages.h"
#include "tools/loop/loop_state.h"
#include "tools/loop/stage_commands.h"

namespace phaseloop::loop {
namespace {

using json = nlohmann::json;

// The stable version ("" plain clang) as the latest earlier iteration that
// knew it left it: after its canary stage, stable_after; after its publish
// stage (which lists the store), stable_before. Unset when none knew.
std::optional<std::string> KnownStable(const StageContext& ctx) {
  if (ctx.run == nullptr) return std::nullopt;
  for (int i = std::min(ctx.index, ctx.run->iterations_size()) - 1; i >= 0;
       --i) {
    const v1::LoopIteration& earlier = ctx.run->iterations(i);
    if (StageDone(earlier, "canary")) return earlier.stable_after();
    if (StageDone(earlier, "publish")) return earlier.stable_before();
  }
  return std::nullopt;
}

absl::StatusOr<StageOutcome> Train(const StageContext& ctx,
                                   v1::LoopIteration& it,
                                   StageExecutor& executor) {
  const LoopConfig& c = *ctx.config;
  const std::string out = ctx.iteration_dir + "/policy.plpolicy";
  RemoveFile(out);
  std::vector<std::string> argv = {ctx.setup->phaseloop,
                                   "train",
                                   "--buffer",
                                   ctx.setup->buffer,
                                   "--config",
                                   c.learner,
                                   "--out",
                                   out,
                                   "--threads",
                                   "1",
                                   "--gate-workloads",
                                   c.gate_split,
                                   "--gate-workloads-dir",
                                   c.workloads_dir,
                                   "--gate-cc",
                                   ctx.setup->cc,
                                   "--gate-work-dir",
                                   ctx.lab_dir + "/gate",
                                   "--gate-budget-s",
                                   Number(c.gate_budget_s),
                                   "--gate-object-cache",
                                   ctx.lab_dir + "/object-cache",
                                   "--json"};
  for (const std::string& name : c.gate_workloads) {
    argv.insert(argv.end(), {"--gate-workload", name});
  }
  if (!c.gate_timed) argv.push_back("--gate-untimed");
  if (c.explore_in_canary) {
    argv.push_back("--explore-untried");
    // Stable as earlier iterations left it (this loop moves it only
    // through its canaries); unknown before any of them listed the store.
    if (const auto stable = KnownStable(ctx)) {
      argv.insert(argv.end(),
                  {"--stable-version", stable->empty() ? "plain" : *stable});
    }
    // What earlier iterations tried without a canary's reward (the gate,
    // staging or the error budget stopped it) is not tried again.
    for (int i = 0;
         ctx.run != nullptr && i < ctx.index && i < ctx.run->iterations_size();
         ++i) {
      const v1::LoopIteration& earlier = ctx.run->iterations(i);
      if (!earlier.explored_pipeline().empty() && !earlier.has_final_reward()) {
        argv.insert(argv.end(),
                    {"--explore-skip", earlier.explored_pipeline()});
      }
    }
  }
  auto ran = RunCommand(ctx, executor, "train", "train", argv);
  if (!ran.ok()) return ran.status();
  if (ran->stopped) return StageOutcome{StageOutcome::kStopped, ""};
  auto report = ReadJson(OutPath(ctx, "train"));
  if (report.ok() && (*report)["exploration"].is_object()) {
    const json& exploration = (*report)["exploration"];
    it.set_exploration_reason(exploration.value("reason", ""));
    if (exploration.value("exploring", false)) {
      it.set_explored_pipeline(exploration.value("pipeline", ""));
    }
  }
  if (ran->exit_code == kTrainGateRefused && report.ok()) {
    it.set_gate_passed(false);
    it.set_train_transitions(static_cast<int>(
        report->value("/metrics/train_transitions"_json_pointer, 0.0)));
    it.set_train_canary_runs(static_cast<int>(
        report->value("/metrics/train_canary_runs"_json_pointer, 0.0)));
    const json& gate = (*report)["gate"];
    return StageOutcome{
        StageOutcome::kEndsIteration,
        absl::StrFormat("the gate refused the new policy (geomean %.4f on %d "
                        "held-out workloads, %d failed): nothing to roll out",
                        gate.value("new", 0.0), gate.value("modules", 0),
                        gate.value("new_failed_modules", 0))};
  }
  if (ran->exit_code != kExitOk) {
    return Failed(ctx, "train", "phaseloop train", ran->exit_code);
  }
  if (!report.ok()) return report.status();
  const std::string version = report->value("policy_version", "");
  if (version.empty()) {
    return StageOutcome{
        StageOutcome::kFailed,
        absl::StrCat("phaseloop train exited 0 but named no policy_version; "
                     "see ",
                     OutPath(ctx, "train"))};
  }
  it.set_gate_passed(true);
  it.set_candidate_path(out);
  it.set_candidate_version(version);
  it.set_train_transitions(static_cast<int>(
      report->value("/metrics/train_transitions"_json_pointer, 0.0)));
  it.set_train_canary_runs(static_cast<int>(
      report->value("/metrics/train_canary_runs"_json_pointer, 0.0)));
  const json& gate = (*report)["gate"];
  const std::string verdict =
      gate.value("metric", "") == offline_rl::kGateMetricSpeedOutputsOnly
          ? std::string("gate passed (outputs checked, not timed)")
          : absl::StrFormat("gate passed (geomean %.4f vs -O3)",
                            gate.value("new", 1.0));
  std::string explored;
  if (!it.explored_pipeline().empty()) {
    explored = absl::StrCat("; exploring ", it.explored_pipeline(),
                            " (no canary judged it)");
  }
  return StageOutcome{
      StageOutcome::kDone,
      absl::StrFormat("policy %s from %d transitions (%d canary runs); %s%s",
                      it.candidate_version().substr(0, 12),
                      it.train_transitions(), it.train_canary_runs(), verdict,
                      explored)};
}

absl::StatusOr<StageOutcome> Publish(const StageContext& ctx,
                                     v1::LoopIteration& it,
                                     StageExecutor& executor) {
  auto listed = RunCommand(ctx, executor, "publish", "store-before",
                           {ctx.setup->phaseloop, "policy", "list", "--store",
                            ctx.setup->policy_store, "--json"});
  if (!listed.ok()) return listed.status();
  if (listed->stopped) return StageOutcome{StageOutcome::kStopped, ""};
  if (listed->exit_code != kExitOk) {
    return Failed(ctx, "publish", "phaseloop policy list", listed->exit_code);
  }
  auto listing = ReadJson(OutPath(ctx, "store-before"));
  if (!listing.ok()) return listing.status();
  for (const json& channel : (*listing)["channels"]) {
    if (channel.value("name", "") == "stable") {
      it.set_stable_before(channel.value("policy_version", ""));
    }
  }
  if (it.candidate_version() == it.stable_before()) {
    return StageOutcome{
        StageOutcome::kEndsIteration,
        absl::StrCat("the policy ", it.candidate_version().substr(0, 12),
                     " is stable already: nothing to roll out")};
  }
  for (const json& policy : (*listing)["policies"]) {
    const json& verdict = policy["verdict"];
    if (policy.value("policy_version", "") == it.candidate_version() &&
        verdict.is_object() && verdict.value("verdict", "") == "failed") {
      return StageOutcome{
          StageOutcome::kEndsIteration,
          absl::StrCat("the policy ", it.candidate_version().substr(0, 12),
                       " failed a canary before (", verdict.value("reason", ""),
                       "): not rolled out again")};
    }
  }
  auto pushed = RunCommand(
      ctx, executor, "publish", "publish",
      {ctx.setup->phaseloop, "policy", "push", "--store",
       ctx.setup->policy_store, "--channel", "candidate", "--note",
       absl::StrCat("loop ", ctx.setup->loop_id, " iteration ", ctx.index + 1),
       "--json", it.candidate_path()});
  if (!pushed.ok()) return pushed.status();
  if (pushed->stopped) return StageOutcome{StageOutcome::kStopped, ""};
  if (pushed->exit_code != kExitOk) {
    return Failed(ctx, "publish", "phaseloop policy push", pushed->exit_code);
  }
  return StageOutcome{StageOutcome::kDone,
                      absl::StrCat(it.candidate_version().substr(0, 12),
                                   " on the candidate channel (stable: ",
                                   it.stable_before().empty()
                                       ? std::string("plain -O3")
                                       : it.stable_before().substr(0, 12),
                                   ")")};
}

absl::StatusOr<StageOutcome> Canary(const StageContext& ctx,
                                    v1::LoopIteration& it,
                                    StageExecutor& executor) {
  it.set_canary_id(CanaryIdOf(ctx.setup->loop_id, ctx.index));
  std::vector<std::string> argv = {ctx.setup->phaseloop,
                                   "canary",
                                   "run",
                                   "--service",
                                   ctx.config->service,
                                   "--candidate",
                                   it.candidate_version(),
                                   "--canary-id",
                                   it.canary_id(),
                                   "--kafka",
                                   ctx.setup->kafka,
                                   "--policy-store",
                                   ctx.setup->policy_store,
                                   "--buffer",
                                   ctx.setup->buffer,
                                   "--state-dir",
                                   ctx.setup->state_dir,
                                   "--cc",
                                   ctx.setup->cc,
                                   "--json"};
  if (it.staged()) {
    argv.insert(argv.end(),
                {"--staging-lower-bound", Number(it.staging_low())});
  }
  auto ran = RunCommand(ctx, executor, "canary", "canary", argv);
  if (!ran.ok()) return ran.status();
  if (ran->stopped || ran->exit_code == kExitStopped) {
    return StageOutcome{StageOutcome::kStopped, ""};
  }
  const int rc = ran->exit_code;
  if (rc != kExitOk && rc != kCanaryRolledBack && rc != kCanaryRefused &&
      rc != kCanaryAborted) {
    return Failed(ctx, "canary", "phaseloop canary run", rc);
  }
  auto state =
      canary::CanaryStateStore(ctx.setup->state_dir).Load(it.canary_id());
  if (!state.ok()) return state.status();
  it.set_canary_phase(state->phase());
  it.clear_canary_reasons();
  for (const auto& reason : state->final_reasons()) {
    it.add_canary_reasons(reason);
  }
  it.set_has_final_reward(state->has_final_reward());
  it.set_final_reward(state->final_reward());
  it.set_has_budget_remaining(state->has_budget_remaining_at_end());
  it.set_budget_remaining(state->budget_remaining_at_end());
  it.set_stable_after(state->phase() == "promoted" ? it.candidate_version()
                                                   : it.stable_before());
  // What the two builds weigh and cost, from their decisions in the buffer
  // (a rollout refused before it built has none). Figures for the report:
  // what cannot be read is said, never a failed stage.
  std::string figures_note;
  for (auto [build_id, figures, version] :
       {std::tuple{state->candidate_build_id(), it.mutable_candidate_build(),
                   it.candidate_version()},
        std::tuple{state->baseline_build_id(), it.mutable_stable_build(),
                   it.stable_before()}}) {
    figures->set_build_id(build_id);
    if (build_id.empty()) continue;
    auto read = ReadBuildFigures(ctx.setup->buffer, build_id);
    if (read.ok()) {
      *figures = *read;
    } else if (!absl::IsNotFound(read.status())) {
      figures_note =
          absl::StrCat(" (build figures: ", read.status().message(), ")");
    } else if (const v1::LoopBuildFigures* earlier =
                   EarlierBuildFigures(ctx, version)) {
      // Bazel served this build from its cache: no compile, no decisions.
      const std::string from = earlier->figures_from_build_id().empty()
                                   ? earlier->build_id()
                                   : earlier->figures_from_build_id();
      *figures = *earlier;
      figures->set_build_id(build_id);
      figures->set_figures_from_build_id(from);
    }
  }
  std::string summary = state->phase();
  if (state->has_final_reward()) {
    absl::StrAppend(&summary, absl::StrFormat(", final reward %+.4f",
                                              state->final_reward()));
  }
  absl::StrAppend(&summary, ", ", state->steps_size(), " step(s) judged",
                  figures_note);
  return StageOutcome{StageOutcome::kDone, summary};
}

}  // namespace

const v1::LoopBuildFigures* EarlierBuildFigures(const StageContext& ctx,
                                                const std::string& version) {
  if (ctx.run == nullptr || version.empty()) return nullptr;
  for (int i = std::min(ctx.index, ctx.run->iterations_size()) - 1; i >= 0;
       --i) {
    const v1::LoopIteration& earlier = ctx.run->iterations(i);
    if (earlier.candidate_version() == version &&
        earlier.candidate_build().modules() > 0) {
      return &earlier.candidate_build();
    }
    if (earlier.stable_before() == version &&
        earlier.stable_build().modules() > 0) {
      return &earlier.stable_build();
    }
  }
  return nullptr;
}

std::string LastLogLine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > 4096 ? size - 4096 : 0;
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  size_t end = tail.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  size_t begin = tail.find_last_of("\r\n", end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  std::string line = tail.substr(begin, end + 1 - begin);
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return line;
}

const std::vector<StageDefinition>& LoopStages() {
  static const std::vector<StageDefinition> kStages = {{"explore", &Explore},
                                                       {"train", &Train},
                                                       {"publish", &Publish},
                                                       {"stage", &Stage},
                                                       {"canary", &Canary}};
  return kStages;
}

std::string CanaryIdOf(const std::string& loop_id, int index) {
  return absl::StrCat(loop_id, "-", index + 1);
}

}  // namespace phaseloop::loop
