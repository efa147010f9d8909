#include "tools/loop/lab_stages.h"

#include <optional>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files/atomic_file.h"
#include "nlohmann/json.hpp"
#include "tools/loop/stage_commands.h"

namespace phaseloop::loop {
namespace {

using json = nlohmann::json;

// Explore's runtime search into `db`; kDone once it finished (marked).
absl::StatusOr<StageOutcome> Search(const StageContext& ctx,
                                    StageExecutor& executor,
                                    const std::string& db) {
  const LoopConfig& c = *ctx.config;
  auto ran = RunCommand(ctx, executor, "explore", "explore",
                        {ctx.setup->phaseloop,
                         "search",
                         "--objective",
                         "runtime",
                         "--workload",
                         c.explore_workload,
                         "--workloads-dir",
                         c.workloads_dir,
                         "--budget",
                         Number(c.explore_budget_s),
                         "--confirm-budget",
                         Number(c.explore_confirm_budget_s),
                         "--runoff-budget",
                         Number(c.explore_runoff_budget_s),
                         "--runoff-contenders",
                         absl::StrCat(c.explore_runoff_contenders),
                         "--seed",
                         absl::StrCat(ctx.index + 1),
                         "--buffer",
                         db,
                         "--cc",
                         ctx.setup->cc,
                         "--work-dir",
                         ctx.lab_dir,
                         "--json"});
  if (!ran.ok()) return ran.status();
  if (ran->stopped) return StageOutcome{StageOutcome::kStopped, ""};
  if (ran->exit_code != kExitOk) {
    return Failed(ctx, "explore", "phaseloop search", ran->exit_code);
  }
  if (auto s = files::WriteFileAtomically(FinishedPath(ctx, "explore"),
                                          absl::StrCat(ran->exit_code));
      !s.ok()) {
    return s;
  }
  return StageOutcome{StageOutcome::kDone, ""};
}

// The stage command into `db` (stable pulled first when there is one): its
// exit code once it finished (marked), or the outcome that ends the stage.
absl::StatusOr<std::variant<StageOutcome, int>> RunStage(
    const StageContext& ctx, v1::LoopIteration& it, StageExecutor& executor,
    const std::string& db) {
  const LoopConfig& c = *ctx.config;
  // Staged against stable (what the error budget's lower bound is about):
  // its artifact pulled from the store; plain -O3 while nothing is stable.
  std::string baseline = "baseline";
  if (!it.stable_before().empty()) {
    const std::string stable = ctx.iteration_dir + "/stable.plpolicy";
    auto pulled = RunCommand(ctx, executor, "stage", "stable-pull",
                             {ctx.setup->phaseloop, "policy", "pull", "--store",
                              ctx.setup->policy_store, "--version",
                              it.stable_before(), "--out", stable, "--json"});
    if (!pulled.ok()) return pulled.status();
    if (pulled->stopped) return StageOutcome{StageOutcome::kStopped, ""};
    if (pulled->exit_code != kExitOk) {
      return Failed(ctx, "stage", "phaseloop policy pull", pulled->exit_code);
    }
    baseline = absl::StrCat("artifact:", stable);
  }
  auto ran = RunCommand(ctx, executor, "stage", "stage",
                        {ctx.setup->phaseloop,
                         "stage",
                         "--workload",
                         c.stage_workload,
                         "--workloads-dir",
                         c.workloads_dir,
                         "--policy",
                         absl::StrCat("artifact:", it.candidate_path()),
                         "--baseline",
                         baseline,
                         "--budget-s",
                         Number(c.stage_budget_s),
                         "--buffer",
                         db,
                         "--cc",
                         ctx.setup->cc,
                         "--work-dir",
                         ctx.iteration_dir + "/stage",
                         "--object-cache",
                         ctx.lab_dir + "/object-cache",
                         "--json"});
  if (!ran.ok()) return ran.status();
  if (ran->stopped) return StageOutcome{StageOutcome::kStopped, ""};
  if (ran->exit_code != kExitOk && ran->exit_code != kStageMiscompile) {
    return Failed(ctx, "stage", "phaseloop stage", ran->exit_code);
  }
  if (auto s = files::WriteFileAtomically(FinishedPath(ctx, "stage"),
                                          absl::StrCat(ran->exit_code));
      !s.ok()) {
    return s;
  }
  return ran->exit_code;
}

}  // namespace

absl::StatusOr<StageOutcome> Explore(const StageContext& ctx,
                                     v1::LoopIteration& it,
                                     StageExecutor& executor) {
  const LoopConfig& c = *ctx.config;
  const std::string db = ctx.iteration_dir + "/explore.db";
  if (!FinishedExitCode(ctx, "explore", db)) {
    RemoveFile(FinishedPath(ctx, "explore"));
    RemoveFile(db);
    auto searched = Search(ctx, executor, db);
    if (!searched.ok() || searched->kind != StageOutcome::kDone) {
      return searched;
    }
  }
  auto report = ReadJson(OutPath(ctx, "explore"));
  if (!report.ok()) {
    RemoveFile(FinishedPath(ctx, "explore"));  // a rerun searches again
    return report.status();
  }
  it.set_explore_evaluations(
      report->value("/counts/evaluations"_json_pointer, 0));
  auto merged = MergeBuffer(ctx, executor, "explore", db);
  if (!merged.ok() || merged->kind != StageOutcome::kDone) return merged;
  std::string summary = absl::StrCat(it.explore_evaluations(),
                                     " evaluations of ", c.explore_workload);
  const json& confirmed = (*report)["confirmed_speedup"];
  if (confirmed.is_object()) {
    absl::StrAppend(&summary,
                    absl::StrFormat("; winners confirmed at %.3fx vs -O3",
                                    confirmed.value("median", 1.0)));
  }
  return StageOutcome{StageOutcome::kDone, summary};
}

absl::StatusOr<StageOutcome> Stage(const StageContext& ctx,
                                   v1::LoopIteration& it,
                                   StageExecutor& executor) {
  const LoopConfig& c = *ctx.config;
  const std::string db = ctx.iteration_dir + "/stage.db";
  std::optional<int> exit_code = FinishedExitCode(ctx, "stage", db);
  if (!exit_code) {
    RemoveFile(FinishedPath(ctx, "stage"));
    RemoveFile(db);
    auto staged = RunStage(ctx, it, executor, db);
    if (!staged.ok()) return staged.status();
    if (std::holds_alternative<StageOutcome>(*staged)) {
      return std::get<StageOutcome>(*staged);
    }
    exit_code = std::get<int>(*staged);
  }
  auto report = ReadJson(OutPath(ctx, "stage"));
  if (!report.ok()) {
    RemoveFile(FinishedPath(ctx, "stage"));  // a rerun stages again
    return report.status();
  }
  // The canary's error budget is told staging's lower bound: a speed figure
  // the stage did not give is never made up.
  const json& rows = (*report)["workloads"];
  const json row = rows.is_array() && !rows.empty() ? rows[0] : json::object();
  const json& speedup = row.contains("speedup") ? row["speedup"] : json();
  if (*exit_code != kStageMiscompile &&
      !(speedup.is_object() && speedup.value("median", json()).is_number() &&
        speedup.value("low", json()).is_number() &&
        speedup.value("high", json()).is_number())) {
    RemoveFile(FinishedPath(ctx, "stage"));  // a rerun stages again
    return StageOutcome{
        StageOutcome::kFailed,
        absl::StrCat(
            "phaseloop stage gave no speed figure for ", c.stage_workload,
            " (verdict ", row.value("verdict", std::string("none")),
            row.contains("detail") ? absl::StrCat(": ", row.value("detail", ""))
                                   : std::string(),
            "); the canary needs one; see ", OutPath(ctx, "stage"))};
  }
  it.set_staged(true);
  it.set_staging_verdict(row.value("verdict", ""));
  if (speedup.is_object()) {
    it.set_staging_speedup(speedup["median"].get<double>());
    it.set_staging_low(speedup["low"].get<double>());
    it.set_staging_high(speedup["high"].get<double>());
  }
  // A miscompile's record and block list must reach the buffer too.
  auto merged = MergeBuffer(ctx, executor, "stage", db);
  if (!merged.ok() || merged->kind != StageOutcome::kDone) return merged;
  if (*exit_code == kStageMiscompile) {
    return StageOutcome{
        StageOutcome::kEndsIteration,
        absl::StrCat("miscompile on ", c.stage_workload,
                     ": recorded and blocked, never rolled out (",
                     row.value("detail", ""), ")")};
  }
  return StageOutcome{
      StageOutcome::kDone,
      absl::StrFormat("%s: %s, %.4fx vs %s [%.4f, %.4f]", c.stage_workload,
                      it.staging_verdict(), it.staging_speedup(),
                      it.stable_before().empty() ? "-O3" : "stable",
                      it.staging_low(), it.staging_high())};
}

}  // namespace phaseloop::loop
