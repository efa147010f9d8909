#include "staging_harness/staging/stage_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/subcommand.h"
#include "common/process/stop_signals.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/profiling/profile_collection.h"
#include "staging_harness/runner/build_options.h"
#include "staging_harness/staging/stage_report.h"
#include "staging_harness/staging/stage_workload.h"
#include "staging_harness/workloads/workload_files.h"

namespace phaseloop::staging {
namespace fs = std::filesystem;
namespace {

struct StageFlags {
  std::vector<std::string> workloads;
  bool all = false;
  std::string split;
  runner::WorkloadBuildFlags build;  // --workloads-dir, --cc, --link-flags
  std::string policy;
  std::string baseline = "baseline";
  std::string opt_level = "O3";
  double budget_s = 120;
  int min_pairs = 0;  // 0: 10, or --max-pairs when that is lower
  int max_pairs = 60;
  double half_width = 0.01;
  double confidence = 0.99;
  int cpu = -1;
  bool ubsan = false;
  bool time_identical = false;
  bool no_count = false;
  std::string buffer;
  std::string work_dir;
  std::string object_cache;
  std::string profile;
  std::string candidate_cflags;
  bool bolt = false;
  int64_t bolt_input_seed = -1;
  bool json = false;
};

// The workload files the flags name (workload_files.h).
absl::StatusOr<std::vector<std::string>> WorkloadFiles(const StageFlags& f) {
  if (f.all) {
    std::vector<std::string> available =
        workloads::ListWorkloadFiles(f.build.workloads_dir);
    if (available.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--all: no *.yaml under --workloads-dir ", f.build.workloads_dir,
          "; run from the checkout's root or "
          "give --workloads-dir"));
    }
    return available;
  }
  std::vector<std::string> files;
  for (const std::string& name : f.workloads) {
    absl::StatusOr<std::string> file =
        workloads::WorkloadFileFor(name, f.build.workloads_dir);
    if (!file.ok()) return file.status();
    files.push_back(*file);
  }
  return files;
}

// One workload's records, in one transaction, as soon as it is staged: a
// later workload that fails does not cost the earlier ones their results.
absl::Status WriteRecords(replay_buffer::ReplayStore& store,
                          const StageRecords& records) {
  replay_buffer::WriteBatch batch;
  batch.decisions = records.decisions;
  batch.rewards = records.rewards;
  if (records.miscompile) batch.miscompiles.push_back(*records.miscompile);
  return store.Write(batch);
}

// `spec` as the wrapper must read it from a build's own directory: its file
// path made absolute (a relative one named another file there).
std::string AbsolutePolicySpec(const std::string& spec) {
  absl::string_view text = absl::StripAsciiWhitespace(spec);
  auto absolute = [](absl::string_view path) {
    return path.empty() || path.front() == '/'
               ? std::string(path)
               : fs::absolute(std::string(path)).string();
  };
  if (text == "baseline" || absl::StartsWith(text, "fixed:")) return spec;
  if (absl::ConsumePrefix(&text, "table:")) {
    return absl::StrCat("table:", absolute(text));
  }
  if (absl::ConsumePrefix(&text, "artifact:")) {
    const size_t query = text.find('?');
    return absl::StrCat("artifact:", absolute(text.substr(0, query)),
                        query == absl::string_view::npos ? absl::string_view()
                                                         : text.substr(query));
  }
  return absolute(text);
}

// Bad input when the wrapper could not use a policy on some unit of either
// build (PolicyFallback): the result would stage clang against clang.
absl::Status PoliciesApplied(const StageFlags& f, const StageResult& result) {
  for (const auto& [flag, spec, built] :
       {std::tuple{"--policy", &f.policy, &result.candidate},
        {"--baseline", &f.baseline, &result.baseline}}) {
    if (const v1::Decision* d = PolicyFallback(*built)) {
      // A policy refused as a whole (a pipeline the wrapper will not run)
      // is decided before any source is read: its record names none.
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " ", *spec, ": phaseloop-cc could not use it on ",
          d->source().empty() ? std::string("any unit") : d->source(),
          " and compiled with plain clang (", d->reason(), ": ", d->detail(),
          "); nothing recorded: fix the policy"));
    }
  }
  return absl::OkStatus();
}

int RunStage(const StageFlags& f) {
  process::KillChildrenOnStopSignals();
  auto fail = [](const absl::Status& status) {
    std::cerr << "phaseloop stage: " << status.message() << "\n";
    return command::ExitCodeOf(status);
  };
  if (f.workloads.empty() == !f.all) {
    return fail(absl::InvalidArgumentError(
        "give --workload NAME (repeatable) or --all"));
  }
  // The policies, read before any build: one the wrapper cannot read would
  // only fall back to clang on every unit. Which pipelines a policy may run
  // is the wrapper's to say (--cc may name a lab build of it): that is
  // checked after the build, from its decisions (PolicyFallback).
  for (const auto& [flag, spec] :
       {std::pair{"--policy", &f.policy}, {"--baseline", &f.baseline}}) {
    if (absl::StatusOr<std::unique_ptr<cc_wrapper::PolicyRunner>> loaded =
            cc_wrapper::LoadPolicy(*spec);
        !loaded.ok() && !passes::IsRefusedPipeline(loaded.status())) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat(flag, " ", *spec, ": ", loaded.status().message())));
    }
  }
  if (f.cpu < -1 ||
      f.cpu >= static_cast<int>(std::thread::hardware_concurrency())) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--cpu ", f.cpu, ": this machine has CPUs 0 to ",
                     std::thread::hardware_concurrency() - 1,
                     "; give one of them, or leave --cpu out (not pinned)")));
  }
  if (f.min_pairs > f.max_pairs) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--min-pairs ", f.min_pairs, " is above --max-pairs ",
                     f.max_pairs, ": give --min-pairs <= --max-pairs")));
  }
  absl::StatusOr<std::vector<std::string>> files = WorkloadFiles(f);
  if (!files.ok()) return fail(files.status());
  std::vector<workloads::Workload> chosen;
  for (const std::string& file : *files) {
    absl::StatusOr<workloads::Workload> workload =
        workloads::LoadWorkload(file);
    if (!workload.ok()) return fail(workload.status());
    if (!f.split.empty() && workloads::SplitName(workload->split) != f.split) {
      continue;
    }
    chosen.push_back(*std::move(workload));
  }
  if (chosen.empty()) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("no workload of split '", f.split, "' among ",
                     files->size(), " files")));
  }
  absl::StatusOr<runner::WorkloadBuildSetup> build =
      runner::ResolveWorkloadBuild(f.build);
  if (!build.ok()) return fail(build.status());

  StageOptions options;
  options.candidate_policy = AbsolutePolicySpec(f.policy);
  options.baseline_policy = AbsolutePolicySpec(f.baseline);
  options.opt_level = f.opt_level;
  options.compilers = build->compilers;
  options.link_flags = build->link_flags;
  options.timing.budget_s = f.budget_s;
  options.timing.min_pairs =
      f.min_pairs > 0 ? f.min_pairs : std::min(10, f.max_pairs);
  options.timing.max_pairs = f.max_pairs;
  options.timing.half_width = f.half_width;
  options.timing.confidence = f.confidence;
  options.cpu = f.cpu;
  options.ubsan = f.ubsan;
  options.time_identical = f.time_identical;
  options.count_executed = !f.no_count;
  // Absolute: builds, generators and the wrapper run in directories of
  // their own, where a relative path would name another place.
  options.object_cache_dir =
      f.object_cache.empty() ? "" : fs::absolute(f.object_cache).string();
  absl::StatusOr<std::string> candidate_cflags =
      CandidateCflags(f.profile, f.candidate_cflags);
  if (!candidate_cflags.ok()) return fail(candidate_cflags.status());
  options.candidate_cflags = *std::move(candidate_cflags);
  if (f.bolt && !f.buffer.empty()) {
    return fail(absl::InvalidArgumentError(
        "--bolt with --buffer: a BOLT-rewritten candidate's speedup belongs "
        "to no pipeline, so it is not recorded; stage without --buffer"));
  }
  absl::StatusOr<std::optional<profiling::BoltOptions>> bolt =
      BoltFromFlags(f.bolt, f.bolt_input_seed, options.link_flags);
  if (!bolt.ok()) return fail(bolt.status());
  options.bolt = *std::move(bolt);
  const std::string work_root = WorkRoot(f.work_dir, "phaseloop-stage");
  // With link flags the builds' CC is a script under the work directory,
  // and make splits $(CC) at blanks: every build failed, blamed on the
  // workload.
  if (!options.link_flags.empty()) {
    if (absl::Status blanks = runner::CheckWorkDirWithoutBlanks(
            work_root,
            "with --link-flags (or --bolt) the builds' CC is a script in it");
        !blanks.ok()) {
      return fail(blanks);
    }
  }

  // Opened before any build, so a buffer that cannot be used fails fast.
  std::unique_ptr<replay_buffer::ReplayStore> store;
  if (!f.buffer.empty()) {
    absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> opened =
        replay_buffer::OpenReplayStore(f.buffer);
    if (!opened.ok()) return fail(opened.status());
    store = *std::move(opened);
  }
  std::vector<StageResult> results;
  bool miscompiled = false, unusable = false;
  // A workload that cannot be staged stops the run; what was staged before
  // it is still shown (and was recorded), and a miscompile found keeps its
  // exit code.
  absl::Status stopped;
  for (const workloads::Workload& workload : chosen) {
    options.work_dir = work_root + "/" + workload.name;
    absl::StatusOr<StageResult> result =
        StageWorkload(workload, options, std::cerr);
    if (result.ok()) {
      if (absl::Status usable = PoliciesApplied(f, *result); !usable.ok()) {
        result = usable;
      }
    }
    if (!result.ok()) {
      stopped = absl::Status(
          result.status().code(),
          absl::StrCat(workload.name, ": ", result.status().message()));
      break;
    }
    // A candidate that failed its check: wrong outputs, or past a time
    // limit the baseline kept.
    miscompiled = miscompiled || result->verdict == Verdict::kMiscompile ||
                  result->verdict == Verdict::kTimedOut;
    unusable = unusable || result->verdict == Verdict::kUnusable;
    if (store) {
      const StageRecords records = RecordsOf(*result);
      if (absl::Status written = WriteRecords(*store, records); !written.ok()) {
        stopped = written;
        break;
      }
      std::cerr << "stage: " << workload.name << ": "
                << (records.empty()
                        ? absl::StrCat("nothing to record in the replay buffer "
                                       "(verdict ",
                                       VerdictName(result->verdict), ")")
                        : "recorded in the replay buffer " + f.buffer)
                << "\n";
    }
    results.push_back(*std::move(result));
  }
  if (f.json) {
    std::cout << FormatStageJson(results, std::string(stopped.message()));
  } else if (!results.empty() || stopped.ok()) {
    std::cout << FormatStageTable(results);
  }
  if (!stopped.ok()) {
    const int code = fail(stopped);
    if (!results.empty()) {
      std::cerr << "phaseloop stage: stopped after " << results.size() << " of "
                << chosen.size() << " workloads (shown above)\n";
    }
    return miscompiled ? kExitMiscompile : code;
  }
  if (miscompiled) return kExitMiscompile;
  return unusable ? command::kExitBadInput : command::kExitOk;
}

}  // namespace

void AddStageCommand(CLI::App& app, int& exit_code) {
  auto [cmd, flags] = command::AddSubcommand<StageFlags>(
      app, "stage",
      "Build a workload with a candidate policy and the baseline, check the "
      "candidate's outputs (against the baseline run twice and an -O0 "
      "reference) before any timing, then time them in interleaved pairs "
      "until the 99 % interval of the speedup is within ±1 %. Exit 0 "
      "measured, 1 internal error, 2 bad input (or an unusable workload), 3 "
      "the candidate failed its check: a miscompile, or a run past a time "
      "limit the baseline kept (even when a later workload could not be "
      "staged)",
      exit_code, RunStage);
  cmd->add_option("--workload", flags->workloads,
                  "workload name (configs/workloads/NAME.yaml) or a YAML "
                  "path; repeatable");
  cmd->add_flag("--all", flags->all, "every workload under --workloads-dir");
  cmd->add_option("--split", flags->split, "only workloads of this split")
      ->check(CLI::IsMember({"train", "test"}));
  cmd->add_option("--policy", flags->policy,
                  "the candidate: a policy spec as PHASELOOP_POLICY takes it "
                  "(fixed:PIPELINE, table:FILE, artifact:FILE[?...], a policy "
                  "file)")
      ->required();
  cmd->add_option("--baseline", flags->baseline, "the policy to compare with")
      ->capture_default_str();
  cmd->add_option("--opt-level", flags->opt_level, "the level both build at")
      ->check(CLI::IsMember({"O1", "O2", "O3", "Os", "Oz"}))
      ->capture_default_str();
  cmd->add_option("--budget-s", flags->budget_s,
                  "seconds of timing per workload (builds and checks not "
                  "counted)")
      ->check(command::PositiveNumber())
      ->capture_default_str();
  cmd->add_option("--min-pairs", flags->min_pairs,
                  "interleaved pairs before the interval is looked at "
                  "(default 10, or --max-pairs when lower)")
      ->check(CLI::Range(3, 10000));
  cmd->add_option("--max-pairs", flags->max_pairs, "at most this many pairs")
      ->check(CLI::Range(3, 10000))
      ->capture_default_str();
  cmd->add_option("--half-width", flags->half_width,
                  "stop once the interval is within ±this of the median")
      ->check(command::NumberInRange(1e-6, 1.0))
      ->capture_default_str();
  cmd->add_option("--confidence", flags->confidence,
                  "of the speedup intervals (distribution-free, of the "
                  "median per-pair ratio)")
      ->check(command::NumberInRange(0.5, 0.9999))
      ->capture_default_str();
  cmd->add_option("--cpu", flags->cpu,
                  "pin every run to this CPU (default: not pinned)");
  cmd->add_flag("--ubsan", flags->ubsan,
                "on a mismatch, build the baseline with UBSan to tell "
                "undefined behaviour from a miscompile");
  cmd->add_flag("--time-identical", flags->time_identical,
                "time byte-identical builds too: with --policy baseline, an "
                "A/A run that shows the machine's noise");
  cmd->add_flag("--no-count", flags->no_count,
                "skip the executed IR instruction count (two more builds and "
                "one run of each side, after timing): the deterministic "
                "figure beside the time");
  cmd->add_option("--buffer", flags->buffer,
                  "replay buffer to record results in (staging rewards with "
                  "the build's decisions; miscompiles and their block list)");
  cmd->add_option("--work-dir", flags->work_dir,
                  "scratch directory (sources, builds, runs), kept for "
                  "inspection (default: $TMPDIR/phaseloop-stage)");
  cmd->add_option("--object-cache", flags->object_cache,
                  "lab setting: the wrapper's object cache directory for "
                  "every build (PHASELOOP_OBJECT_CACHE; units unchanged "
                  "between builds compile once; default: none)");
  cmd->add_option("--profile", flags->profile,
                  "build the candidate (not the baseline) with this "
                  "execution profile (-fprofile-instr-use; written by "
                  "`phaseloop profile`)");
  cmd->add_option("--candidate-cflags", flags->candidate_cflags,
                  "compiler flags for the candidate's build only (its "
                  "CFLAGS/CXXFLAGS, which most builds also link with): "
                  "measure a build flag with the same checks and timing as "
                  "a policy, e.g. --policy baseline --candidate-cflags=-flto");
  AddBoltOptions(*cmd, flags->bolt, flags->bolt_input_seed,
                 "; not with --buffer");
  runner::AddWorkloadBuildOptions(*cmd, flags->build);
  cmd->add_flag("--json", flags->json, "print JSON instead of a table");
}

absl::StatusOr<std::optional<profiling::BoltOptions>> BoltFromFlags(
    bool bolt, int64_t input_seed, std::vector<std::string>& link_flags) {
  if (!bolt) {
    if (input_seed >= 0) {
      return absl::InvalidArgumentError(
          "--bolt-input-seed is for --bolt (the seed of BOLT's training "
          "inputs)");
    }
    return std::nullopt;
  }
  profiling::BoltOptions options;
  if (input_seed >= 0) options.input_seed = input_seed;
  if (absl::Status tools = profiling::CheckBoltTools(options); !tools.ok()) {
    return tools;
  }
  if (std::find(link_flags.begin(), link_flags.end(),
                profiling::kBoltLinkFlag) == link_flags.end()) {
    link_flags.push_back(profiling::kBoltLinkFlag);
  }
  return options;
}

void AddBoltOptions(CLI::App& cmd, bool& bolt, int64_t& input_seed,
                    const std::string& what) {
  cmd.add_flag(
      "--bolt", bolt,
      absl::StrCat("rewrite the candidate's programs and libraries with "
                   "LLVM's BOLT (bolt-16) from a profile of its own runs, "
                   "after its build: post-link code layout; every build then "
                   "links with -Wl,--emit-relocs (BOLT needs the "
                   "relocations)",
                   what));
  cmd.add_option("--bolt-input-seed", input_seed,
                 "make BOLT's training inputs from this seed (default: the "
                 "timed inputs), so the profile comes from other data than "
                 "the runs it is judged on")
      ->check(command::NonNegativeNumber());
}

absl::StatusOr<std::string> CandidateCflags(const std::string& profile,
                                            const std::string& cflags) {
  std::string flags;
  if (!profile.empty()) {
    absl::StatusOr<std::string> flag = profiling::ProfileUseFlag(profile);
    if (!flag.ok()) return flag.status();
    flags = *flag;
  }
  if (absl::StatusOr<std::vector<std::string>> checked =
          runner::FlagWords("--candidate-cflags", cflags, "-flto");
      !checked.ok()) {
    return checked.status();
  }
  if (!cflags.empty()) {
    absl::StrAppend(&flags, flags.empty() ? "" : " ", cflags);
  }
  return flags;
}

}  // namespace phaseloop::staging
