#include "staging_harness/search/survey_command.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/session/baselines.h"
#include "compiler_driver/session/compilation_session.h"
#include "nlohmann/json.hpp"
#include "staging_harness/search/greedy_search.h"

namespace phaseloop::search {

int RunSurvey(const SurveyFlags& flags, std::ostream& out, std::ostream& err) {
  std::optional<Objective> objective = ParseObjective(flags.objective);
  if (!objective) {
    err << "error: --objective '" << flags.objective
        << "' is not ir_count, text_size or alloc_size\n";
    return command::kExitBadInput;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(flags.corpus, ec)) {
    err << "error: --corpus '" << flags.corpus
        << "' is not a directory of C/C++ sources\n";
    return command::kExitBadInput;
  }
  std::vector<std::string> sources;
  for (const auto& entry : std::filesystem::directory_iterator(flags.corpus)) {
    if (ir::IsSourcePath(entry.path().string()))
      sources.push_back(entry.path().string());
  }
  std::sort(sources.begin(), sources.end());
  if (sources.empty()) {
    err << "error: --corpus '" << flags.corpus
        << "' holds no .c/.cc/.cpp files\n";
    return command::kExitBadInput;
  }

  const std::vector<ir::OptLevel> levels = {
      ir::OptLevel::kO0, ir::OptLevel::kO3, ir::OptLevel::kOz};
  nlohmann::json rows = nlohmann::json::array();
  double log_alloc_ratio = 0, log_text_ratio = 0, log_ir_ratio = 0;
  int measured = 0;
  // Programs left out, with the reason: in the JSON too (only stderr said
  // so, and the JSON read as if the directory held fewer programs).
  nlohmann::json skipped = nlohmann::json::array();
  absl::Status first_failure;
  auto skip = [&](const std::string& source, const absl::Status& why) {
    err << "  skipped: " << why.message() << "\n";
    skipped.push_back(
        {{"program", std::filesystem::path(source).filename().string()},
         {"reason", std::string(why.message())}});
    if (first_failure.ok()) first_failure = why;
  };
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string& source = sources[i];
    err << "[" << i + 1 << "/" << sources.size() << "] " << source << "\n";
    auto baselines =
        session::SourceBaselines(source, ir::FrontendOptions{}, levels);
    if (!baselines.ok()) {
      skip(source, baselines.status());
      continue;
    }
    session::SessionOptions options;
    options.opt_level = ir::OptLevel::kOz;
    auto session = session::CompilationSession::StartFromFile(
        source, ir::FrontendOptions{}, options);
    if (!session.ok()) {
      skip(source, session.status());
      continue;
    }
    auto greedy = GreedySearch(**session, *objective, flags.budget_seconds);
    if (!greedy.ok()) {
      skip(source, greedy.status());
      continue;
    }
    const session::Baseline& oz = (*baselines)[2];
    nlohmann::json row = {
        {"program", std::filesystem::path(source).filename().string()},
        {"module_hash", (*session)->StartHash()},
        {"greedy",
         {{"ir_count", greedy->ir_count},
          {"alloc_size", greedy->alloc_size},
          {"text_size", greedy->text_size},
          {"actions", greedy->actions.size()},
          {"evaluations", greedy->evaluations},
          {"seconds", greedy->seconds}}}};
    for (const session::Baseline& b : *baselines) {
      row[ir::OptLevelName(b.level)] = {{"ir_count", b.ir_count},
                                        {"alloc_size", b.alloc_size},
                                        {"text_size", b.text_size}};
    }
    if (greedy->alloc_size > 0 && greedy->text_size > 0 &&
        greedy->ir_count > 0) {
      log_alloc_ratio += std::log(double(oz.alloc_size) / greedy->alloc_size);
      log_text_ratio += std::log(double(oz.text_size) / greedy->text_size);
      log_ir_ratio += std::log(double(oz.ir_count) / greedy->ir_count);
      ++measured;
    }
    rows.push_back(row);
  }
  if (measured == 0) {
    err << "error: no program in '" << flags.corpus << "' could be measured\n";
    // A directory of programs that do not compile is the user's to fix.
    return first_failure.ok() ? command::kExitInternal
                              : command::ExitCodeOf(first_failure);
  }
  const double alloc_oz_ratio = std::exp(log_alloc_ratio / measured);
  const double text_oz_ratio = std::exp(log_text_ratio / measured);
  const double geomean_oz_ratio = std::exp(log_ir_ratio / measured);
  nlohmann::json summary = {{"corpus", flags.corpus},
                            {"convention", "real-build"},
                            {"objective", ObjectiveName(*objective)},
                            {"budget_seconds", flags.budget_seconds},
                            {"programs", rows},
                            {"skipped", skipped},
                            {"alloc_oz_ratio", alloc_oz_ratio},
                            {"text_oz_ratio", text_oz_ratio},
                            {"geomean_oz_ratio", geomean_oz_ratio}};
  if (flags.json) {
    out << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  out << "corpus " << flags.corpus << " (real-build modules); greedy search on "
      << ObjectiveName(*objective) << ", " << flags.budget_seconds
      << " s per program\n\n";
  out << std::left << std::setw(18) << "program" << std::right;
  for (const char* h : {"O0 ir", "O3 ir", "Oz ir", "greedy ir", "O0 alloc",
                        "O3 alloc", "Oz alloc", "greedy alloc", "O0 .text",
                        "O3 .text", "Oz .text", "greedy .text", "steps"}) {
    out << std::setw(h[0] == 'g' ? 13 : 10) << h;
  }
  out << "\n";
  for (const auto& r : rows) {
    out << std::left << std::setw(18) << r["program"].get<std::string>()
        << std::right;
    for (const char* key : {"ir_count", "alloc_size", "text_size"}) {
      for (const char* col : {"O0", "O3", "Oz", "greedy"}) {
        out << std::setw(col[0] == 'g' ? 13 : 10) << r[col][key].get<int64_t>();
      }
    }
    out << std::setw(10) << r["greedy"]["actions"].get<int64_t>() << "\n";
  }
  out << std::fixed << std::setprecision(3) << "\ngreedy vs clang-16 -Oz over "
      << measured << " programs: alloc_oz_ratio " << alloc_oz_ratio
      << ", text_oz_ratio " << text_oz_ratio << ", geomean_oz_ratio "
      << geomean_oz_ratio << "  (> 1 is smaller than -Oz)\n";
  if (!skipped.empty()) {
    out << skipped.size() << " program" << (skipped.size() == 1 ? "" : "s")
        << " skipped:\n";
    for (const auto& s : skipped) {
      out << "  " << s["program"].get<std::string>() << ": "
          << s["reason"].get<std::string>() << "\n";
    }
  }
  return command::kExitOk;
}

void AddSurveyCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SurveyFlags>();
  CLI::App* cmd = app.add_subcommand(
      "survey",
      "Baselines and a short greedy search over a directory of programs");
  cmd->add_option("--corpus", flags->corpus,
                  "directory of C/C++ programs (one source file each)")
      ->required();
  cmd->add_option("--objective", flags->objective,
                  "ir_count, text_size or alloc_size")
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget_seconds,
                  "greedy search seconds per program")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  cmd->add_flag("--json", flags->json, "print JSON instead of a table");
  cmd->callback([flags, &exit_code] {
    exit_code = RunSurvey(*flags, std::cout, std::cerr);
  });
}

}  // namespace phaseloop::search
