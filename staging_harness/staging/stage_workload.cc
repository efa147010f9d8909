#include "staging_harness/staging/stage_workload.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/files/file_lock.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/ir/module_loader.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/staging/stage_workload_impl.h"
#include "staging_harness/workloads/workload_source.h"

namespace phaseloop::staging {
namespace {

using runner::BuiltVariant;
using runner::CommandRun;

// Pairs the candidate changed: modules whose pipeline differs from the
// baseline build's for the same module, or, for a module the baseline never
// saw (the candidate's own flags, a profile, changed it), for the same
// source. A module that ran the baseline's pipeline is not blamed: its
// difference came from the flags, not from a pipeline.
std::vector<std::pair<std::string, std::string>> Blame(
    const BuiltVariant& baseline, const BuiltVariant& candidate) {
  // A source as the build named it, without the build's own directory
  // (each variant builds in a copy of its own).
  auto source_of = [](const v1::Decision& d, const BuiltVariant& built) {
    return absl::StripPrefix(d.source(), built.build_dir + "/");
  };
  std::map<std::string, std::string, std::less<>> by_hash, by_source;
  for (const v1::Decision& d : baseline.decisions) {
    // Only what ran a pipeline: a pass-through of the same source (a -S
    // listing, -MM, a one-step test link) names it too, with no pipeline.
    if (d.pipeline().empty()) continue;
    if (!d.module_hash().empty()) by_hash[d.module_hash()] = d.pipeline();
    if (!d.source().empty()) {
      by_source[std::string(source_of(d, baseline))] = d.pipeline();
    }
  }
  std::vector<std::pair<std::string, std::string>> blamed;
  for (const v1::Decision& d : candidate.decisions) {
    if (d.module_hash().empty() || d.pipeline().empty()) continue;
    const std::string* baseline_pipeline = nullptr;
    if (auto h = by_hash.find(d.module_hash()); h != by_hash.end()) {
      baseline_pipeline = &h->second;
    } else if (auto f = by_source.find(source_of(d, candidate));
               f != by_source.end()) {
      baseline_pipeline = &f->second;
    }
    if (baseline_pipeline && *baseline_pipeline == d.pipeline()) continue;
    blamed.emplace_back(d.module_hash(), d.pipeline());
  }
  return blamed;
}

}  // namespace

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kMeasured:
      return "measured";
    case Verdict::kIdentical:
      return "identical";
    case Verdict::kMiscompile:
      return "miscompile";
    case Verdict::kUnusable:
      return "unusable";
    case Verdict::kChecked:
      return "checked";
    case Verdict::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

WorkloadStager::WorkloadStager(const workloads::Workload& workload,
                               const StageOptions& options,
                               std::ostream& progress)
    : impl_(std::make_shared<Impl>(workload, options, progress)) {}

const runner::PreparedInputs& WorkloadStager::inputs() const {
  return impl_->inputs;
}

std::string WorkRoot(const std::string& given,
                     const std::string& default_name) {
  namespace fs = std::filesystem;
  return given.empty() ? (fs::temp_directory_path() / default_name).string()
                       : fs::absolute(given).lexically_normal().string();
}

absl::StatusOr<std::unique_ptr<WorkloadStager>> WorkloadStager::Prepare(
    const workloads::Workload& workload, const StageOptions& options,
    std::ostream& progress) {
  std::unique_ptr<WorkloadStager> stager(
      new WorkloadStager(workload, options, progress));
  Impl& s = *stager->impl_;
  if (absl::Status locked = s.LockWorkDir(); !locked.ok()) return locked;
  absl::StatusOr<std::string> source =
      workloads::ResolveWorkloadSource(workload, progress);
  if (!source.ok()) return source.status();
  s.source = *source;
  absl::StatusOr<runner::PreparedInputs> inputs =
      runner::PrepareInputs(workload, s.source, s.Dir("inputs"), progress);
  if (!inputs.ok()) return inputs.status();
  s.inputs = *std::move(inputs);
  absl::StatusOr<BuiltVariant> baseline =
      s.Build("baseline", options.baseline_policy, options.opt_level);
  if (!baseline.ok()) return baseline.status();
  if (std::string why = WrapperNotReached(*baseline, options.opt_level);
      !why.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(workload.path, ": the baseline build: ", why));
  }
  stager->baseline_ = *std::move(baseline);
  return stager;
}

absl::StatusOr<StageResult> WorkloadStager::Evaluate(
    const std::string& candidate_policy, const std::string& label,
    const TimingOptions& timing_options,
    const std::optional<profiling::BoltOptions>& bolt) {
  Impl& s = *impl_;
  const workloads::Workload& workload = s.workload;
  std::ostream& progress = s.progress;
  const auto start = std::chrono::steady_clock::now();
  StageResult result;
  result.workload = workload.name;
  result.split = workloads::SplitName(workload.split);
  result.baseline = baseline_;
  progress << workload.name << ": staging policy " << candidate_policy
           << " against " << s.options.baseline_policy << " at -"
           << s.options.opt_level << "\n";
  absl::StatusOr<BuiltVariant> candidate = s.Build(
      label, candidate_policy, s.options.opt_level, s.options.candidate_cflags);
  if (!candidate.ok()) return candidate.status();
  // The candidate builds as the baseline did; only its own flags can keep
  // the wrapper out (-ffast-math, -mllvm ... are left to clang), and a
  // build flag is measured as it is, wrapper or not.
  if (std::string why = s.options.candidate_cflags.empty()
                            ? WrapperNotReached(*candidate, "")
                            : std::string();
      !why.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(workload.path, ": the ", label, " build: ", why));
  }
  auto finish = [&](Verdict verdict, std::string detail) {
    result.verdict = verdict;
    result.detail = std::move(detail);
    result.elapsed_s = timing::SecondsSince(start);
    return result;
  };
  // With BOLT, the build as the wrapper left it, to tell a mismatch BOLT
  // made from one the policy made. The baseline is checked first, so a
  // workload that cannot be checked is unusable before BOLT runs it.
  std::optional<BuiltVariant> before_bolt;
  if (bolt) {
    if (!s.checked) {
      if (absl::Status checked = s.CheckBaseline(baseline_); !checked.ok()) {
        return checked;
      }
    }
    if (!s.unusable.empty()) {
      result.candidate = *candidate;
      return finish(Verdict::kUnusable, s.unusable);
    }
    absl::StatusOr<profiling::BoltResult> bolted =
        profiling::BoltOptimize(workload, s.source, *candidate, s.inputs, *bolt,
                                s.Dir(label + "-bolt"), progress);
    if (!bolted.ok()) return bolted.status();
    before_bolt = *candidate;
    candidate->artifacts_dir = bolted->artifacts_dir;
    candidate->artifacts_hash = bolted->artifacts_hash;
    result.bolt = *std::move(bolted);
  }
  result.candidate = *candidate;
  for (const v1::Decision& d : candidate->decisions) {
    ++result.units;
    if (d.outcome() == v1::OPTIMIZED) ++result.optimized_units;
  }
  if (result.optimized_units == 0) {
    std::map<std::string, int> reasons;
    for (const v1::Decision& d : candidate->decisions) ++reasons[d.reason()];
    std::string why;
    for (const auto& [reason, n] : reasons) {
      absl::StrAppend(&why, why.empty() ? "" : ", ",
                      reason.empty() ? "-" : reason, " ", n);
    }
    progress << "  note: the candidate policy ran on none of the "
             << result.units << " compiler commands (links included: " << why
             << "; `phaseloop decisions show --spool "
             << s.Dir("build-" + label) << "/spool`)\n";
  }
  if (baseline_.artifacts_hash == candidate->artifacts_hash &&
      !s.options.time_identical) {
    progress << "  identical artifacts: speedup exactly 1, nothing to run\n";
    if (s.options.count_executed) result.executed_ir_ratio = 1;
    return finish(Verdict::kIdentical,
                  "the candidate built byte-identical artifacts");
  }

  // Correctness, before any timing.
  if (!s.checked) {
    if (absl::Status checked = s.CheckBaseline(baseline_); !checked.ok()) {
      return checked;
    }
  }
  if (!s.unusable.empty()) return finish(Verdict::kUnusable, s.unusable);
  progress << "  check: the candidate against the baseline\n";
  absl::StatusOr<std::vector<CommandRun>> checked =
      s.CheckedPass(*candidate, label);
  if (!checked.ok()) return checked.status();
  auto differs = s.FirstMismatch(s.reference, *checked, {"baseline", label});
  if (!differs.ok()) return differs.status();
  // The baseline passed within the limit: the candidate is far slower, or
  // never ends. No speed figure; not called a miscompile, but its pairs are
  // blocked all the same (cause "timed_out"): no search should propose a
  // pipeline that costs a run's whole time limit again.
  if (differs->has_value() && (*differs)->second.what == "timed_out") {
    progress << "  TIMED OUT: " << Describe(**differs) << "\n";
    result.mismatch_run = (*differs)->first;
    result.mismatch = (*differs)->second;
    result.blamed = Blame(baseline_, *candidate);
    result.cause = "timed_out";  // replay_buffer::kVerdictTimedOut
    return finish(
        Verdict::kTimedOut,
        absl::StrCat("the candidate ran past the time limit the "
                     "baseline kept (",
                     Describe(**differs), "): far slower, or it never ends"));
  }
  // A difference from the baseline's outputs, seen in the check or in a
  // timed run: confirmed or not, told from the program's own undefined
  // behaviour, blamed and recorded.
  using Difference = std::pair<std::string, correctness::Mismatch>;
  auto judge_difference =
      [&](const Difference& difference) -> absl::StatusOr<StageResult> {
    absl::StatusOr<WorkloadStager::Impl::DifferenceCheck> varies =
        s.CheckDifferenceAgain(baseline_, *candidate, label);
    if (!varies.ok()) return varies.status();
    if (!varies->workload_varies.empty()) {
      progress << "  UNUSABLE: " << varies->workload_varies << "\n";
      return finish(
          Verdict::kUnusable,
          absl::StrCat("the candidate's outputs differed (",
                       Describe(difference), "), but ", varies->workload_varies,
                       ": not a miscompile; make the workload's outputs "
                       "deterministic"));
    }
    // Seen once in the candidate's runs, never in the baseline's: a rare
    // variation, too weak to block a pipeline for good (a workload that
    // varies one run in twenty would block one in forty of a search's
    // candidates); said, nothing recorded.
    if (varies->candidate_differed == 1) {
      progress << "  NOT CONFIRMED: the difference did not recur in the "
                  "candidate's "
               << varies->candidate_runs - 1 << " more runs\n";
      result.unconfirmed = true;
      return finish(
          Verdict::kUnusable,
          absl::StrCat("the candidate's outputs differed once (",
                       Describe(difference), ") and not in its ",
                       varies->candidate_runs - 1,
                       " more runs, the baseline's never: a rare variation "
                       "of the outputs, not a confirmed miscompile; nothing "
                       "recorded"));
    }
    const std::string how_often =
        varies->candidate_differed == varies->candidate_runs
            ? std::string()
            : absl::StrCat(" (on ", varies->candidate_differed, " of its ",
                           varies->candidate_runs,
                           " runs; the baseline's never varied)");
    result.mismatch_run = difference.first;
    result.mismatch = difference.second;
    result.blamed = Blame(baseline_, *candidate);
    result.cause = "unknown";
    // The build before BOLT gives the baseline's outputs: the rewrite alone
    // changed them (unless UBSan finds the program's own undefined
    // behaviour, which a new code layout can bring out).
    bool bolt_alone = false;
    if (before_bolt) {
      progress << "  check: the build before BOLT\n";
      absl::StatusOr<std::vector<CommandRun>> before =
          s.CheckedPass(*before_bolt, label + "-before-bolt");
      if (!before.ok()) return before.status();
      auto differs_before =
          s.FirstMismatch(s.reference, *before, {"baseline", "before-BOLT"});
      if (!differs_before.ok()) return differs_before.status();
      bolt_alone = !differs_before->has_value();
    }
    if (s.options.ubsan) {
      absl::StatusOr<BuiltVariant> ubsan =
          s.Build("ubsan", "baseline", s.options.opt_level, kUbsanFlags);
      absl::StatusOr<std::vector<CommandRun>> sanitized =
          ubsan.ok() ? s.CheckedPass(*ubsan, "ubsan", kSlowBuildTimeoutScale)
                     : absl::StatusOr<std::vector<CommandRun>>(ubsan.status());
      if (sanitized.ok()) {
        auto ub = s.FirstMismatch(s.reference, *sanitized,
                                  {"baseline", "UBSan build"});
        // The program's own UB only when UBSan said so: a "runtime error:"
        // in a run's stderr (kept beside its stdout). A UBSan build that
        // differs otherwise (timed out, crashed on its larger frames) or a
        // failed comparison says nothing either way (the cause stays
        // unknown, a miscompile).
        bool reported = false;
        for (const CommandRun& run : *sanitized) {
          absl::StatusOr<std::string> err = ir::ReadFile(
              (std::filesystem::path(run.outputs.stdout_path).parent_path() /
               "stderr")
                  .string());
          reported = reported || (err.ok() && err->find("runtime error:") !=
                                                  std::string::npos);
        }
        if (ub.ok() && !ub->has_value()) {
          result.cause = "miscompile";
        } else if (ub.ok() && reported) {
          result.cause = "undefined_behaviour";
        } else {
          progress << "  the UBSan build's run tells nothing ("
                   << (ub.ok() ? Describe(**ub)
                               : std::string(ub.status().message()))
                   << ")\n";
        }
      } else {
        progress << "  the UBSan build could not run: "
                 << sanitized.status().message() << "\n";
      }
    }
    if (bolt_alone && result.cause != "undefined_behaviour") {
      result.cause = "bolt";
      result.blamed.clear();
    } else if (result.blamed.empty() && result.cause == "unknown" &&
               !s.options.candidate_cflags.empty()) {
      // Every module ran the baseline's pipeline: the flags changed it.
      result.cause = "build_flags";
    }
    if (result.cause == "undefined_behaviour") {
      // The program's own: not a miscompile (exit 3 filed compiler bugs for
      // it). Recorded, blocking nothing (RecordsOf).
      progress << "  UNDEFINED BEHAVIOUR: " << Describe(difference)
               << " (the UBSan build of the baseline disagrees with it)\n";
      return finish(
          Verdict::kUnusable,
          absl::StrCat("the candidate's outputs differ from the baseline's (",
                       Describe(difference),
                       "), and a UBSan build of the baseline shows the "
                       "program's own undefined behaviour (its outputs "
                       "differ too): not a miscompile; fix the program, "
                       "or leave the workload out"));
    }
    progress << "  MISCOMPILE: " << Describe(difference) << " ("
             << result.blamed.size() << " module pipelines blamed, cause "
             << result.cause << ")\n";
    return finish(Verdict::kMiscompile,
                  absl::StrCat("the candidate's outputs differ from the "
                               "baseline's",
                               how_often, ": ", Describe(difference)));
  };
  if (differs->has_value()) return judge_difference(**differs);

  if (!s.options.time_candidate) {
    progress << "  outputs match the baseline's; not timed\n";
    return finish(Verdict::kChecked,
                  "the candidate's outputs match the baseline's; not timed");
  }

  // Timing, from two run directories whose paths have the same length: the
  // shell exports PWD, so a longer path shifts the program's stack by as
  // many bytes, a layout change that alone moves run times by a percent or
  // more (Mytkowicz et al., "Producing wrong data without doing anything
  // obviously wrong!", ASPLOS 2009) and would bias an A/A comparison.
  const std::string baseline_dir = s.Dir("time-a");
  const std::string candidate_dir = s.Dir("time-b");
  for (const auto& [built, dir] :
       {std::pair{&baseline_, baseline_dir}, {&*candidate, candidate_dir}}) {
    if (absl::Status ready =
            runner::PrepareRunDirectory(workload, *built, s.inputs, dir);
        !ready.ok()) {
      return ready;
    }
  }
  runner::PassOptions pass;
  pass.cpu = s.options.cpu;
  pass.count_hardware = s.options.count_hardware;
  // Every timed pass's outputs are compared with the checked baseline's: a
  // candidate wrong only some of the time passed its one check half the
  // time and was timed (review), and with --buffer became a reward.
  std::optional<Difference> timed_difference;
  bool timed_difference_in_baseline = false;
  // Each command's outputs kept apart (outside the measured time): in the
  // run directory a later command overwrote an earlier one's stdout.
  runner::PassOptions baseline_pass = pass, candidate_pass = pass;
  baseline_pass.keep_outputs_dir = s.Dir("time-a-outputs");
  candidate_pass.keep_outputs_dir = s.Dir("time-b-outputs");
  RunSide run = [&](Side side) -> absl::StatusOr<PassSample> {
    const bool is_baseline = side == Side::kBaseline;
    absl::StatusOr<std::vector<CommandRun>> runs =
        runner::RunPass(workload, is_baseline ? baseline_dir : candidate_dir,
                        is_baseline ? baseline_pass : candidate_pass);
    if (!runs.ok()) return runs.status();
    auto differs_now = s.FirstMismatch(
        s.reference, *runs,
        {"baseline", is_baseline ? "baseline (timed)" : label + " (timed)"});
    if (!differs_now.ok()) return differs_now.status();
    if (differs_now->has_value()) {
      timed_difference = **differs_now;
      timed_difference_in_baseline = is_baseline;
      return absl::AbortedError("outputs differed during timing");
    }
    for (size_t i = 0; i < runs->size(); ++i) {
      const process::Measurement& m = (*runs)[i].measurement;
      if (m.timed_out || m.exit_status != workload.runs[i].check.exit_status) {
        return absl::FailedPreconditionError(absl::StrCat(
            workload.path, ": ", workload.runs[i].name, " of the ",
            is_baseline ? "baseline" : label,
            m.timed_out ? " ran over its timeout_s"
                        : absl::StrCat(" exited ", m.exit_status),
            " during timing (it passed the check before): a flaky program"));
      }
    }
    runner::PassTotals totals = runner::Totals(*runs);
    return PassSample{totals.wall_s,           totals.cpu_s,
                      totals.hardware_counted, totals.instructions,
                      totals.cycles,           totals.pinned};
  };
  const bool tty = &progress == &std::cerr && ::isatty(2);
  TimingProgress report = [&](const TimingResult& so_far) {
    const int pairs = static_cast<int>(so_far.baseline.size());
    if (pairs < timing_options.min_pairs) {
      // One line a pair on a terminal; off one, only the first.
      if (tty || pairs == 1) {
        progress << (tty ? "\r" : "")
                 << absl::StrFormat(
                        "  timing: %2d pairs (an interval from %d pairs on)",
                        pairs, timing_options.min_pairs)
                 << (tty ? "" : "\n") << std::flush;
      }
      return;
    }
    progress << (tty ? "\r" : "")
             << absl::StrFormat(
                    "  timing: %2d pairs  speedup %.4f [%.4f, %.4f]  p %.3g",
                    pairs, so_far.wall.median, so_far.wall.low,
                    so_far.wall.high, so_far.p_value)
             << (tty && so_far.stop_reason.empty() ? "" : "\n") << std::flush;
  };
  absl::StatusOr<TimingResult> timing =
      TimeInterleaved(run, timing_options, report);
  if (!timing.ok() && timed_difference.has_value()) {
    progress << "\n  check: the "
             << (timed_difference_in_baseline ? "baseline" : label)
             << "'s outputs differed during timing: "
             << Describe(*timed_difference) << "\n";
    if (timed_difference_in_baseline) {
      return finish(Verdict::kUnusable,
                    absl::StrCat("the baseline's outputs differed from its "
                                 "checked run's during timing (",
                                 Describe(*timed_difference),
                                 "): make the workload's outputs "
                                 "deterministic"));
    }
    return judge_difference(*timed_difference);
  }
  if (!timing.ok()) return timing.status();
  result.timing = *timing;
  result.reward = std::log(timing->wall.median);
  result.reward_low = std::log(timing->wall.low);
  result.reward_high = std::log(timing->wall.high);
  // Runs that did not land on the CPU asked for make that CPU no better
  // known than the others.
  result.timing->machine.timed_cpu = timing->all_pinned ? s.options.cpu : -1;
  result.machine_warnings = BusyMachineWarnings(
      result.timing->machine, result.timing->machine.timed_cpu);
  for (const std::string& warning : result.machine_warnings) {
    progress << "  busy machine: " << warning << "\n";
  }
  result.short_runs = ShortRunsWarning(
      *result.timing, static_cast<int>(s.workload.runs.size()));
  if (!result.short_runs.empty()) {
    progress << "  short runs: " << result.short_runs << "\n";
  }

  if (s.options.count_executed) {
    if (!s.baseline_executed) {
      absl::StatusOr<ExecutedIr> counted =
          s.CountExecuted("baseline-count", s.options.baseline_policy, "");
      if (!counted.ok()) return counted.status();
      s.baseline_executed = *counted;
    }
    absl::StatusOr<ExecutedIr> counted = s.CountExecuted(
        label + "-count", candidate_policy, s.options.candidate_cflags);
    if (!counted.ok()) return counted.status();
    result.baseline_executed = s.baseline_executed;
    result.candidate_executed = *counted;
    result.executed_ir_ratio = ExecutedIrRatio(*s.baseline_executed, *counted);
    if (result.executed_ir_ratio > 0) {
      progress << absl::StrFormat("  count: executed IR ratio %.4f\n",
                                  result.executed_ir_ratio);
    }
  }
  return finish(Verdict::kMeasured,
                absl::StrCat("stopped: ", timing->stop_reason));
}

absl::StatusOr<StageResult> StageWorkload(const workloads::Workload& workload,
                                          const StageOptions& options,
                                          std::ostream& progress) {
  absl::StatusOr<std::unique_ptr<WorkloadStager>> stager =
      WorkloadStager::Prepare(workload, options, progress);
  if (!stager.ok()) return stager.status();
  return (*stager)->Evaluate(options.candidate_policy, "candidate",
                             options.timing, options.bolt);
}

}  // namespace phaseloop::staging
