#include "tools/loop/loop_runner.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files/atomic_file.h"
#include "tools/loop/loop_stages.h"
#include "tools/loop/stage_commands.h"

namespace phaseloop::loop {
namespace {

v1::LoopStage* FindStage(v1::LoopIteration& it, const std::string& name) {
  for (auto& stage : *it.mutable_stages()) {
    if (stage.name() == name) return &stage;
  }
  return nullptr;
}

std::string Duration(int64_t ms) {
  const int64_t s = (ms + 500) / 1000;
  return s >= 60 ? absl::StrFormat("%dm%02ds", s / 60, s % 60)
                 : absl::StrFormat("%ds", s);
}

std::string Short(const std::string& version) {
  return version.empty() ? "-" : version.substr(0, 12);
}

}  // namespace

LoopRunner::LoopRunner(LoopConfig config, LoopSetup setup,
                       StageExecutor* executor)
    : config_(std::move(config)),
      setup_(std::move(setup)),
      executor_(executor),
      store_(setup_.state_dir) {}

absl::Status LoopRunner::Save(const v1::LoopRun& run) const {
  return store_.Save(run);
}

absl::StatusOr<v1::LoopRun> LoopRunner::Run() {
  v1::LoopRun run;
  auto loaded = store_.Load(setup_.loop_id);
  if (loaded.ok()) {
    run = *std::move(loaded);
    if (run.phase() == "failed") {
      // The user fixed what failed and runs again: the failed stage reruns.
      run.set_phase("running");
      run.clear_failure();
    }
    // The store by another address (the command checked that it holds what
    // the loop published): the address that answered is kept.
    if (setup_.policy_dir.empty() && !setup_.policy_store.empty()) {
      run.set_policy_store(setup_.policy_store);
    }
  } else if (absl::IsNotFound(loaded.status())) {
    run.set_loop_id(setup_.loop_id);
    run.set_created_ms(executor_->NowMs());
    run.set_phase("running");
    run.set_config_path(config_.source);
    run.set_buffer_path(setup_.buffer);
    run.set_policy_dir(setup_.policy_dir);
    if (setup_.policy_dir.empty()) run.set_policy_store(setup_.policy_store);
    if (auto s = files::CheckStartsInUtf8(run, LoopStateKind()); !s.ok()) {
      return s;
    }
  } else {
    return loaded.status();
  }
  // More iterations may be asked of a loop that ran before.
  if (setup_.iterations > run.iterations_planned()) {
    run.set_iterations_planned(setup_.iterations);
    if (run.phase() == "done") run.set_phase("running");
  }
  run.set_starts(run.starts() + 1);
  if (auto s = Save(run); !s.ok()) return s;
  if (run.phase() == "done") return run;

  for (int index = 0; index < run.iterations_planned(); ++index) {
    if (absl::Status s = RunIteration(run, index); !s.ok()) return s;
    if (run.phase() != "running" || executor_->StopRequested()) return run;
    const v1::LoopIteration& it = run.iterations(index);
    if (it.finished_ms() == 0) return run;  // stopped inside the iteration
  }
  run.set_phase("done");
  if (auto s = Save(run); !s.ok()) return s;
  return run;
}

absl::Status LoopRunner::RunIteration(v1::LoopRun& run, int index) {
  while (run.iterations_size() <= index) {
    v1::LoopIteration* added = run.add_iterations();
    added->set_index(run.iterations_size() - 1);
  }
  v1::LoopIteration& it = *run.mutable_iterations(index);
  if (it.finished_ms() != 0) return absl::OkStatus();
  StageContext ctx;
  ctx.config = &config_;
  ctx.setup = &setup_;
  ctx.iteration_dir = store_.IterationDir(run.loop_id(), index);
  ctx.lab_dir = store_.LoopDir(run.loop_id()) + "/lab";
  ctx.index = index;
  ctx.run = &run;
  if (auto s = files::MakeDirectories(ctx.iteration_dir); !s.ok()) return s;
  if (it.started_ms() == 0) it.set_started_ms(executor_->NowMs());

  bool ended = false;
  for (const StageDefinition& definition : LoopStages()) {
    v1::LoopStage* stage = FindStage(it, definition.name);
    if (stage == nullptr) {
      stage = it.add_stages();
      stage->set_name(definition.name);
      stage->set_status("pending");
    }
    if (stage->status() == "done") continue;
    if (stage->status() == "skipped" || ended) continue;
    if (executor_->StopRequested()) return Save(run);
    stage->set_status("running");
    stage->set_attempts(stage->attempts() + 1);
    stage->set_started_ms(executor_->NowMs());
    stage->set_finished_ms(0);
    stage->set_log_path(ctx.iteration_dir + "/" + definition.name + ".log");
    if (auto s = Save(run); !s.ok()) return s;
    executor_->Progress(absl::StrFormat("iteration %d/%d %-8s started",
                                        index + 1, run.iterations_planned(),
                                        definition.name));
    absl::StatusOr<StageOutcome> outcome;
    try {
      outcome = definition.run(ctx, it, *executor_);
    } catch (const std::exception& e) {
      // A command's JSON with a value of another type than the loop reads
      // (a null where a number was): the stage fails, named, and its
      // command runs again on resume (its finished mark is dropped).
      std::error_code ignored;
      std::filesystem::remove(FinishedPath(ctx, definition.name), ignored);
      outcome = absl::DataLossError(absl::StrCat(
          "the output of its command is not what the loop reads (", e.what(),
          "); see the stage's files in ", ctx.iteration_dir));
    }
    // `stage` may have moved if the stage added to `it`: look it up again.
    stage = FindStage(it, definition.name);
    const int64_t now = executor_->NowMs();
    if (!outcome.ok()) {
      stage->set_status("failed");
      stage->set_finished_ms(now);
      stage->set_summary(std::string(outcome.status().message()));
      run.set_phase("failed");
      run.set_failure(absl::StrCat("iteration ", index + 1, " ",
                                   definition.name, ": ",
                                   outcome.status().message()));
      return Save(run);
    }
    if (outcome->kind == StageOutcome::kStopped) {
      executor_->Progress(absl::StrFormat(
          "iteration %d/%d %-8s stopped: run the same command to resume",
          index + 1, run.iterations_planned(), definition.name));
      return Save(run);  // still "running": resumed from its start
    }
    stage->set_finished_ms(now);
    stage->set_summary(outcome->summary);
    if (outcome->kind == StageOutcome::kFailed) {
      stage->set_status("failed");
      run.set_phase("failed");
      run.set_failure(absl::StrCat("iteration ", index + 1, " ",
                                   definition.name, ": ", outcome->summary));
      executor_->Progress(absl::StrFormat("iteration %d/%d %-8s FAILED: %s",
                                          index + 1, run.iterations_planned(),
                                          definition.name, outcome->summary));
      return Save(run);
    }
    stage->set_status("done");
    if (outcome->kind == StageOutcome::kEndsIteration) {
      // Saved with the stage, so a restart never runs what follows.
      ended = true;
      bool after = false;
      for (const StageDefinition& rest : LoopStages()) {
        if (after) {
          v1::LoopStage* skipped = FindStage(it, rest.name);
          if (skipped == nullptr) {
            skipped = it.add_stages();
            skipped->set_name(rest.name);
          }
          skipped->set_status("skipped");
          skipped->set_summary(absl::StrCat("nothing to do: ", definition.name,
                                            " ended the "
                                            "iteration"));
        }
        after = after || std::string(rest.name) == definition.name;
      }
    }
    executor_->Progress(
        absl::StrFormat("iteration %d/%d %-8s %7s  %s", index + 1,
                        run.iterations_planned(), definition.name,
                        Duration(now - stage->started_ms()), outcome->summary));
    if (auto s = Save(run); !s.ok()) return s;
  }
  it.set_finished_ms(executor_->NowMs());
  if (auto s = Save(run); !s.ok()) return s;
  executor_->Progress(FormatIterations(run));
  return absl::OkStatus();
}

std::string FormatIterations(const v1::LoopRun& run) {
  std::string out = absl::StrFormat(
      "%-4s %-12s %-6s %-22s %-11s %9s %8s %-12s %-12s %7s\n", "iter",
      "candidate", "gate", "staging vs stable", "canary", "reward", "budget",
      "stable before", "stable after", "time");
  for (const v1::LoopIteration& it : run.iterations()) {
    const std::string staging =
        it.staged() ? absl::StrFormat("%.3f [%.3f,%.3f]", it.staging_speedup(),
                                      it.staging_low(), it.staging_high())
                    : "-";
    const int64_t elapsed =
        it.finished_ms() > 0 ? it.finished_ms() - it.started_ms() : 0;
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "%-4d %-12s %-6s %-22s %-11s %9s %8s %-12s %-12s %7s\n",
            it.index() + 1, Short(it.candidate_version()),
            GateVerdict(it) == "passed"    ? "yes"
            : GateVerdict(it) == "refused" ? "no"
                                           : "-",
            staging, it.canary_phase().empty() ? "-" : it.canary_phase(),
            it.has_final_reward() ? absl::StrFormat("%+.4f", it.final_reward())
                                  : "-",
            it.has_budget_remaining()
                ? absl::StrFormat("%.1f%%", 100 * it.budget_remaining())
                : "-",
            Short(it.stable_before()), Short(it.stable_after()),
            elapsed > 0 ? Duration(elapsed) : "-"));
  }
  return out;
}

}  // namespace phaseloop::loop
