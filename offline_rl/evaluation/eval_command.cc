#include "offline_rl/evaluation/eval_command.h"

#include <algorithm>
#include <iostream>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/subcommand.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "compiler_driver/policy_runtime/artifact_policy.h"

namespace phaseloop::evaluation {

int RunEval(const EvalFlags& flags, std::ostream& out, std::ostream& err) {
  constexpr char kName[] = "phaseloop eval: ";
  if (flags.options.mode != "single" && flags.options.mode != "topk") {
    err << kName << "--mode must be single or topk, got '" << flags.options.mode
        << "'\n";
    return command::kExitBadInput;
  }
  if (flags.no_fixed && !flags.fixed.empty()) {
    err << kName << "--no-fixed and --fixed contradict each other; give one\n";
    return command::kExitBadInput;
  }
  if (flags.options.budget < 0 || flags.options.top_k < 0 ||
      flags.options.threads < 1 || flags.options.max_modules < 0) {
    err << kName
        << "--budget, --k and --max-modules must be >= 0 and --jobs >= 1\n";
    return command::kExitBadInput;
  }
  // Flags that would be ignored without a word.
  if (flags.options.mode == "single" && flags.options.top_k > 0) {
    err << kName
        << "--k applies to --mode topk (single runs one pipeline); give "
           "--mode topk or leave --k out\n";
    return command::kExitBadInput;
  }
  if (flags.budget_ms >= 0 && flags.budget_given) {
    err << kName
        << "--budget and --budget-ms both given: give --budget (--budget-ms "
           "is its deprecated alias)\n";
    return command::kExitBadInput;
  }
  if (flags.budget_ms >= 0) {
    err << kName << "note: --budget-ms is deprecated; it reads as --budget "
        << flags.budget_ms * policy_runtime::kBudgetInstructionsPerMs
        << " (IR instructions)\n";
  }
  EvalOptions options = flags.options;
  options.fixed_references = flags.no_fixed        ? std::vector<std::string>{}
                             : flags.fixed.empty() ? DefaultFixedReferences()
                                                   : flags.fixed;
  // A fixed reference a policy could not carry would fail on every module.
  for (const std::string& pipeline : options.fixed_references) {
    if (absl::Status allowed = passes::CheckWholePolicyPipeline(
            pipeline, absl::StrCat("--fixed ", pipeline));
        !allowed.ok()) {
      err << kName << allowed.message() << "\n";
      return command::kExitBadInput;
    }
  }
  if (flags.budget_ms >= 0) {  // deprecated clock budget, read as work
    options.budget = flags.budget_ms * policy_runtime::kBudgetInstructionsPerMs;
  }
  options.progress = &err;
  absl::StatusOr<EvalReport> report = EvaluatePolicy(options);
  if (!report.ok()) {
    err << kName << report.status().message() << "\n";
    const absl::StatusCode code = report.status().code();
    return code == absl::StatusCode::kInternal ||
                   code == absl::StatusCode::kUnknown
               ? command::kExitInternal
               : command::kExitBadInput;
  }
  out << (flags.json ? FormatReportJson(*report) : FormatReportTable(*report))
      << "\n";
  // A report of failures only measured nothing.
  const bool all_failed =
      !report->modules.empty() &&
      std::all_of(report->modules.begin(), report->modules.end(),
                  [](const ModuleEval& m) { return !m.error.empty(); });
  if (all_failed) {
    err << kName << "every one of the " << report->modules.size()
        << " modules failed (their errors are in the report): nothing was "
           "measured\n";
    return command::kExitInternal;
  }
  return command::kExitOk;
}

void AddEvalCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<EvalFlags>();
  CLI::App* eval = app.add_subcommand(
      "eval",
      "Evaluate a policy against -Oz on a corpus: text_size and ir_count at "
      "O0, Oz and with the policy, per module and aggregated "
      "(text_oz_ratio, over_oz, geomean_oz_ratio, gym_score)");
  eval->add_option("--policy", flags->options.policy,
                   "policy artifact (.plpolicy, or artifact:<file>) or any "
                   "wrapper policy spec (baseline, fixed:<pipeline>, "
                   "table:<file>, policy file)")
      ->required();
  eval->add_option("--corpus", flags->options.corpus_dir,
                   "corpus directory built by `phaseloop corpus build`")
      ->required();
  eval->add_option("--mode", flags->options.mode,
                   "artifact inference mode: single or topk")
      ->default_str("single");
  eval->add_option("--budget", flags->options.budget,
                   "topk: work budget per module, in IR instructions "
                   "compiled for measurement (never the clock)")
      ->default_str(std::to_string(policy_runtime::kDefaultTopKBudget));
  eval->add_option("--budget-ms", flags->budget_ms,
                   "deprecated alias of --budget: M ms reads as M*20 "
                   "instructions (the rate the old clock budget assumed)")
      ->check(command::NonNegativeNumber());
  eval->add_option("--k", flags->options.top_k,
                   "topk: candidates to measure besides -Oz (0: the "
                   "artifact's default_top_k)")
      ->default_str("0");
  eval->add_option("--split", flags->options.split,
                   "only modules of this split (train, validation, test); "
                   "default all");
  command::AddRenamedOption(*eval, "--jobs", "--threads",
                            flags->options.threads,
                            "modules evaluated in parallel", std::cerr)
      ->default_str("1");
  eval->add_option("--module-timeout", flags->options.module_timeout_s,
                   "seconds for one module (evaluated in a child process; a "
                   "module over the limit is reported failed)")
      ->default_str("600")
      ->check(command::PositiveNumber());
  eval->add_option("--max-modules", flags->options.max_modules,
                   "evaluate only the first N modules (name order); 0 = all")
      ->default_str("0");
  eval->add_option("--fixed", flags->fixed,
                   "a fixed pipeline measured on every module beside the "
                   "policy and -Oz, repeatable (default: "
                   "default<Oz>,codegen<machine-outliner> and "
                   "tuned<Oz;merge-functions>); the report names the best and "
                   "the policy's ratio to it");
  eval->add_flag("--no-fixed", flags->no_fixed,
                 "measure no fixed pipeline besides -Oz (faster)");
  eval->add_flag("--json", flags->json, "print the report as JSON");
  eval->callback([eval, flags, &exit_code] {
    flags->budget_given = eval->count("--budget") > 0;
    exit_code = RunEval(*flags, std::cout, std::cerr);
  });
}

}  // namespace phaseloop::evaluation
