#include "offline_rl/candidates/candidates_command.h"

#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/subcommand.h"
#include "common/files/output_paths.h"
#include "compiler_driver/codegen/codegen_options.h"
#include "nlohmann/json.hpp"

namespace phaseloop::candidates {

int RunMine(const MineFlags& flags, std::ostream& out, std::ostream& err) {
  MineOptions options = flags.options;
  options.write_episodes = !flags.no_episodes;
  options.progress = &err;
  if (options.threads < 1 || options.max_candidates < 0 ||
      options.max_modules < 0) {
    err << "phaseloop candidates mine: --jobs must be >= 1 and "
           "--max-candidates, --max-modules >= 0\n";
    return command::kExitBadInput;
  }
  // Checked before any module is measured: --out over the buffer, a best
  // file or the corpus manifest replaced what this command reads (exit 0).
  std::vector<files::FlagPath> inputs = {
      {"--buffer", options.buffer},
      {"--corpus's manifest", options.corpus_dir + "/manifest.json"}};
  for (const std::string& best : options.best_files) {
    inputs.push_back({"--best", best});
  }
  if (absl::Status s =
          files::CheckOutputPaths({{"--out", options.out}}, inputs);
      !s.ok()) {
    err << "phaseloop candidates mine: " << s.message() << "\n";
    return command::kExitBadInput;
  }
  for (const std::string& fixed : flags.fixed_candidates) {
    const size_t eq = fixed.find('=');
    MineOptions::FixedCandidate f;
    f.name = fixed.substr(0, eq);  // no '=': the whole text, no pipeline
    if (eq != std::string::npos) f.pipeline = fixed.substr(eq + 1);
    options.fixed_candidates.push_back(f);  // checked when mining starts
  }
  if (!flags.codegen_variants.empty()) {
    absl::StatusOr<codegen::SplitPipelineText> variants =
        codegen::SplitPipeline(
            absl::StrCat("codegen<", flags.codegen_variants, ">"));
    if (!variants.ok()) {
      err << "phaseloop candidates mine: --codegen-variants: "
          << variants.status().message() << "\n";
      return command::kExitBadInput;
    }
    options.codegen_variants = variants->codegen;
  }
  absl::StatusOr<MineReport> report = MineCandidates(options);
  if (!report.ok()) {
    err << "phaseloop candidates mine: " << report.status().message() << "\n";
    const absl::StatusCode code = report.status().code();
    return code == absl::StatusCode::kInternal ||
                   code == absl::StatusCode::kUnknown
               ? command::kExitInternal
               : command::kExitBadInput;
  }
  if (flags.json) {
    nlohmann::json j = {{"modules", report->modules},
                        {"failed_modules", report->failed_modules},
                        {"episodes_written", report->episodes_written},
                        {"refused_sequences", report->refused_sequences},
                        {"candidates_file", options.out},
                        {"candidates", report->candidates.size()}};
    out << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  out << absl::StrFormat("%-12s %7s %11s %8s %8s  %s\n", "candidate",
                         "best_for", "mean_reward", "<Oz", ">Oz", "pipeline");
  for (const Candidate& c : report->candidates) {
    std::string pipeline =
        c.pipeline.size() > 60 ? c.pipeline.substr(0, 57) + "..." : c.pipeline;
    out << absl::StrFormat("%-12s %7d %11.4f %8d %8d  %s\n", c.name,
                           c.best_for_modules, c.mean_reward, c.better_than_oz,
                           c.worse_than_oz, pipeline);
  }
  out << absl::StrFormat(
      "\n%d candidates on %d modules (%d failed); %d episodes written; "
      "candidates file %s\n",
      report->candidates.size(), report->modules, report->failed_modules,
      report->episodes_written, options.out);
  if (report->refused_sequences > 0) {
    out << report->refused_sequences
        << " best sequences left out: their pipelines run a pass no policy "
           "may run (compiler_driver/passes/pipeline_check.h)\n";
  }
  return command::kExitOk;
}

void AddCandidatesCommand(CLI::App& app, int& exit_code) {
  CLI::App* candidates = command::AddCommandGroup(
      app, "candidates", "Candidate pipelines for the candidate formulation");
  auto [mine, flags] = command::AddSubcommand<MineFlags>(
      *candidates, "mine",
      "Build a candidate set from best-known sequences, measure every "
      "candidate on every module of a corpus split, store one episode per "
      "(candidate, module) and write the candidates file",
      exit_code,
      [](const MineFlags& f) { return RunMine(f, std::cout, std::cerr); });
  MineOptions& o = flags->options;
  mine->add_option("--buffer", o.buffer,
                   "replay buffer: best sequences are read from it and the "
                   "episodes written into it");
  mine->add_option("--best", o.best_files,
                   "best-sequences file (phaseloop search --best-out); "
                   "repeatable");
  mine->add_option("--objective", o.objective,
                   "alloc_size (the whole object's allocated bytes), "
                   "text_size (.text alone) or ir_count")
      ->default_str("alloc_size");
  mine->add_option("--corpus", o.corpus_dir,
                   "corpus directory (phaseloop corpus build)")
      ->required();
  mine->add_option("--split", o.split, "split of the corpus; \"\" for all")
      ->default_str("train");
  mine->add_option("--max-candidates", o.max_candidates,
                   "candidates besides -Oz, most often best first")
      ->default_str("32");
  mine->add_flag("--oz-prefix-variants", o.oz_prefix_variants,
                 "also try each candidate after -Oz (default<Oz>,<pipeline>)");
  mine->add_option("--fixed-candidate", flags->fixed_candidates,
                   "NAME=PIPELINE always a candidate, after -Oz (repeatable; "
                   "e.g. ozmf=tuned<Oz;merge-functions>)");
  mine->add_option(
      "--codegen-variants", flags->codegen_variants,
      "code generator options each candidate is also tried with, "
      "';'-separated, as \"<name>+mo\" (machine-outliner), "
      "\"<name>+njt\" (no-jump-tables), \"<name>+sf\" (split-functions: "
      "a no-op without a profile) or combined, e.g. "
      "\"<name>+mo+njt\"");
  command::AddRenamedOption(*mine, "--jobs", "--threads", o.threads,
                            "modules measured in parallel", std::cerr)
      ->default_str("1");
  mine->add_option("--max-ir-count", o.max_ir_count,
                   "leave out modules with a larger unoptimised ir_count "
                   "(0 = no limit)")
      ->check(command::NonNegativeNumber());
  mine->add_option("--exclude", o.exclude,
                   "module name to leave out (repeatable)");
  mine->add_option("--module-timeout", o.module_timeout_s,
                   "seconds for one module's candidates (measured in a child "
                   "process; a module over the limit is skipped)")
      ->default_str("600")
      ->check(command::PositiveNumber());
  mine->add_option("--max-modules", o.max_modules, "0 = every module")
      ->default_str("0");
  mine->add_option("--out", o.out, "the candidates file (JSON) to write")
      ->required();
  mine->add_flag("--no-episodes", flags->no_episodes,
                 "measure and write the candidates file only");
  mine->add_flag("--json", flags->json, "print the summary as JSON");
}

}  // namespace phaseloop::candidates
