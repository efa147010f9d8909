#include "staging_harness/search/search_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/subcommand.h"
#include "common/process/self_executable.h"
#include "nlohmann/json.hpp"
#include "replay_buffer/replay_store.h"
#include "staging_harness/search/episode_file.h"
#include "staging_harness/search/search_pool.h"

namespace phaseloop::search {
namespace {

namespace fs = std::filesystem;

// The block list of the replay buffer at `path`, read once: a predicate
// over an immutable set, safe to call from every worker thread.
absl::StatusOr<PipelineBlocked> LoadBlockList(const std::string& path,
                                              size_t* pairs) {
  replay_buffer::OpenOptions options;
  options.create = false;
  absl::StatusOr<std::unique_ptr<replay_buffer::ReplayStore>> store =
      replay_buffer::OpenReplayStore(path, options);
  if (!store.ok()) return store.status();
  absl::StatusOr<std::vector<replay_buffer::BlockedPipeline>> blocked =
      (*store)->BlockedPipelines("");
  if (!blocked.ok()) return blocked.status();
  auto set = std::make_shared<std::set<std::pair<std::string, std::string>>>();
  for (const replay_buffer::BlockedPipeline& b : *blocked) {
    set->emplace(b.module_hash, b.pipeline);
  }
  *pairs = set->size();
  return PipelineBlocked(
      [set](const std::string& module_hash, const std::string& pipeline) {
        return set->count({module_hash, pipeline}) > 0;
      });
}

bool IsBlocked(const PipelineBlocked& blocked, const v1::BestSequence& best) {
  if (!blocked) return false;
  const std::vector<int> actions(best.actions().begin(), best.actions().end());
  return blocked(best.module_hash(),
                 PipelineText(best.action_space_version(), actions));
}

}  // namespace

std::string DefaultWorkerBinary() {
  return process::ExecutableBeside(
      {"phaseloop-session-worker", "session_worker",
       "../staging_harness/workers/session_worker"});
}

namespace {

// DESIGN.md's metrics over the modules searched (both objectives, always).
nlohmann::json Metrics(const std::vector<ModuleResult>& results) {
  double log_alloc = 0, log_text = 0, log_ir = 0, over_oz = 0, log_gym = 0;
  int n = 0, n_alloc = 0;
  bool gym_defined = true;
  for (const ModuleResult& r : results) {
    if (!r.status.ok() || r.text_size <= 0 || r.ir_count <= 0) continue;
    const ModuleReference& ref = r.reference;
    if (r.alloc_size > 0 && ref.alloc_size_oz > 0) {
      log_alloc += std::log(double(ref.alloc_size_oz) / r.alloc_size);
      ++n_alloc;
    }
    log_text += std::log(double(ref.text_size_oz) / r.text_size);
    log_ir += std::log(double(ref.ir_count_oz) / r.ir_count);
    over_oz += double(ref.ir_count_oz - r.ir_count) / ref.ir_count_oz;
    const double gym = double(ref.ir_count_start - r.ir_count) /
                       double(ref.ir_count_start - ref.ir_count_oz);
    if (gym > 0 && std::isfinite(gym)) {
      log_gym += std::log(gym);
    } else {
      gym_defined = false;
    }
    ++n;
  }
  int time_limited = 0;
  for (const ModuleResult& r : results) time_limited += r.time_limited ? 1 : 0;
  nlohmann::json m = {{"modules_measured", n},
                      {"modules_time_limited", time_limited}};
  if (n == 0) return m;
  // null only when every worker predates ALLOC_SIZE.
  m["alloc_oz_ratio"] = n_alloc > 0
                            ? nlohmann::json(std::exp(log_alloc / n_alloc))
                            : nlohmann::json(nullptr);
  m["text_oz_ratio"] = std::exp(log_text / n);
  m["geomean_oz_ratio"] = std::exp(log_ir / n);
  m["over_oz"] = over_oz / n;
  m["gym_score"] =
      gym_defined ? nlohmann::json(std::exp(log_gym / n)) : nullptr;
  return m;
}

nlohmann::json ResultJson(const ModuleResult& r) {
  nlohmann::json j = {{"name", r.input.name}, {"path", r.input.path}};
  if (!r.input.opt_level.empty()) j["frontend_opt_level"] = r.input.opt_level;
  if (!r.status.ok()) {
    j["error"] = std::string(r.status.message());
    return j;
  }
  const ModuleReference& ref = r.reference;
  j["module_hash"] = r.module_hash;
  j["O0"] = {{"ir_count", ref.ir_count_start},
             {"alloc_size", ref.alloc_size_start},
             {"text_size", ref.text_size_start}};
  j["Oz"] = {{"ir_count", ref.ir_count_oz},
             {"alloc_size", ref.alloc_size_oz},
             {"text_size", ref.text_size_oz}};
  j["found"] = {{"ir_count", r.ir_count},
                {"alloc_size", r.alloc_size},
                {"text_size", r.text_size},
                {"actions", r.best_actions},
                {"episode_id", r.best_episode_id}};
  j["alloc_oz_ratio"] =
      r.alloc_size > 0 ? double(ref.alloc_size_oz) / r.alloc_size : 0.0;
  j["text_oz_ratio"] =
      r.text_size > 0 ? double(ref.text_size_oz) / r.text_size : 0.0;
  j["episodes"] = r.episodes;
  j["evaluations"] = r.evaluations;
  j["failed_steps"] = r.failed_steps;
  j["timed_out_steps"] = r.timed_out_steps;
  j["blocked_skipped"] = r.blocked_skipped;
  j["seconds"] = r.seconds;
  j["time_limited"] = r.time_limited;
  return j;
}

void PrintTable(const nlohmann::json& summary, std::ostream& out) {
  out << "search: " << summary["strategy"].get<std::string>() << " on "
      << summary["objective"].get<std::string>() << ", "
      << summary["budget_seconds"].get<double>() << " s per module, ";
  if (summary["max_evaluations"].get<int64_t>() > 0) {
    out << "at most " << summary["max_evaluations"].get<int64_t>()
        << " evaluations per module, ";
  }
  out << summary["workers"].get<int>()
      << " workers (real-build modules; O0 = the "
      << "unoptimised module the search starts from)\n\n";
  out << std::left << std::setw(20) << "module" << std::right;
  const char* headers[] = {"O0 ir",    "Oz ir",       "found ir", "O0 alloc",
                           "Oz alloc", "found alloc", "alloc_oz", "O0 .text",
                           "Oz .text", "found .text", "text_oz",  "steps",
                           "episodes", "evals",       "failed"};
  for (const char* h : headers) out << std::setw(h[0] == 'f' ? 12 : 9) << h;
  out << "\n";
  for (const nlohmann::json& r : summary["modules"]) {
    out << std::left << std::setw(20) << r["name"].get<std::string>()
        << std::right;
    if (r.contains("error")) {
      out << "  error: " << r["error"].get<std::string>() << "\n";
      continue;
    }
    out << std::setw(9) << r["O0"]["ir_count"].get<int64_t>() << std::setw(9)
        << r["Oz"]["ir_count"].get<int64_t>() << std::setw(12)
        << r["found"]["ir_count"].get<int64_t>() << std::setw(9)
        << r["O0"]["alloc_size"].get<int64_t>() << std::setw(9)
        << r["Oz"]["alloc_size"].get<int64_t>() << std::setw(12)
        << r["found"]["alloc_size"].get<int64_t>() << std::setw(9) << std::fixed
        << std::setprecision(3) << r["alloc_oz_ratio"].get<double>()
        << std::setw(9) << r["O0"]["text_size"].get<int64_t>() << std::setw(9)
        << r["Oz"]["text_size"].get<int64_t>() << std::setw(12)
        << r["found"]["text_size"].get<int64_t>() << std::setw(9) << std::fixed
        << std::setprecision(3) << r["text_oz_ratio"].get<double>()
        << std::setw(9) << r["found"]["actions"].size() << std::setw(9)
        << r["episodes"].get<int64_t>() << std::setw(9)
        << r["evaluations"].get<int64_t>() << std::setw(12)
        << r["failed_steps"].get<int64_t>() << "\n";
  }
  const nlohmann::json& m = summary["metrics"];
  out << "\n"
      << summary["strategy"].get<std::string>() << " on "
      << summary["objective"].get<std::string>() << " vs clang-16 -Oz over "
      << m["modules_measured"].get<int>() << " modules: ";
  if (m["modules_measured"].get<int>() == 0) {
    out << "none measured\n";
    return;
  }
  if (summary["max_evaluations"].get<int64_t>() > 0 &&
      m["modules_time_limited"].get<int>() > 0) {
    out << "\nnote: the clock, not --max-evaluations, ended the search on "
        << m["modules_time_limited"].get<int>()
        << " modules: their results depend on this machine's speed\n";
  }
  out << std::fixed << std::setprecision(3) << "alloc_oz_ratio ";
  if (m["alloc_oz_ratio"].is_null()) {
    out << "n/a";
  } else {
    out << m["alloc_oz_ratio"].get<double>();
  }
  out << ", text_oz_ratio " << m["text_oz_ratio"].get<double>()
      << ", geomean_oz_ratio " << m["geomean_oz_ratio"].get<double>()
      << ", over_oz " << m["over_oz"].get<double>() << ", gym_score ";
  if (m["gym_score"].is_null()) {
    out << "n/a";
  } else {
    out << m["gym_score"].get<double>();
  }
  out << "  (ratios > 1 are smaller than -Oz)\n";
}

}  // namespace

int RunSearchCommand(const SearchFlags& flags, std::ostream& out,
                     std::ostream& err) {
  SearchRunOptions options;
  if (flags.workers < 0) {
    err << "error: --jobs must be >= 0 (0: one per hardware thread), got "
        << flags.workers << "\n";
    return command::kExitBadInput;
  }
  std::optional<Strategy> strategy = ParseStrategy(flags.strategy);
  std::optional<Objective> objective = ParseObjective(flags.objective);
  if (!strategy || !objective) {
    err << "error: --strategy must be random|greedy|beam|guided and "
           "--objective "
           "alloc_size|text_size|ir_count|runtime (got '"
        << flags.strategy << "', '" << flags.objective << "')\n";
    return command::kExitBadInput;
  }
  if (flags.corpus.empty() == flags.inputs.empty()) {
    err << "error: give either --corpus DIR or --input FILE (repeatable)\n";
    return command::kExitBadInput;
  }
  if (flags.episodes_out.empty()) {
    err << "error: --episodes-out FILE is required (every trajectory is "
           "logged)\n";
    return command::kExitBadInput;
  }
  std::vector<ModuleInput> modules;
  std::vector<std::string> warnings;
  if (!flags.corpus.empty()) {
    absl::StatusOr<std::vector<ModuleInput>> listed =
        ListCorpus(flags.corpus, flags.split, &warnings);
    if (!listed.ok()) {
      err << "error: " << listed.status().message() << "\n";
      return command::kExitBadInput;
    }
    modules = std::move(*listed);
  }
  if (flags.max_ir_count > 0) {
    const size_t listed = modules.size();
    modules.erase(std::remove_if(modules.begin(), modules.end(),
                                 [&](const ModuleInput& m) {
                                   return m.ir_count_o0 > flags.max_ir_count;
                                 }),
                  modules.end());
    if (modules.size() < listed) {
      warnings.push_back(
          absl::StrCat(listed - modules.size(), " modules over --max-ir-count ",
                       flags.max_ir_count, " (unoptimised ir_count) left out"));
    }
  }
  for (const std::string& path : flags.inputs) {
    absl::StatusOr<ModuleInput> input = InputFile(path);
    if (!input.ok()) {
      err << "error: " << input.status().message() << "\n";
      return command::kExitBadInput;
    }
    modules.push_back(std::move(*input));
  }
  for (const std::string& w : warnings) err << "warning: " << w << "\n";
  if (modules.empty()) {
    err << "error: no module left to search (see the warnings above): "
           "raise --max-ir-count or choose another split\n";
    return command::kExitBadInput;
  }
  std::vector<KnownBest> known;
  if (!flags.best_in.empty()) {
    absl::StatusOr<std::vector<KnownBest>> read =
        ReadBestSequences(flags.best_in);
    if (!read.ok()) {
      err << "error: --best-in: " << read.status().message() << "\n";
      return command::kExitBadInput;
    }
    known = std::move(*read);
  } else if (*strategy == Strategy::kGuided) {
    err << "warning: guided search without --best-in has no sequences to "
           "replay; "
           "it runs greedy then random from the start state\n";
  }
  options.worker.worker_binary =
      flags.worker_binary.empty() ? DefaultWorkerBinary() : flags.worker_binary;
  if (options.worker.worker_binary.empty()) {
    err << "error: no session worker next to this binary or in its bazel-bin "
           "tree; "
           "pass --worker-binary "
           "(bazel-bin/staging_harness/workers/session_worker)\n";
    return command::kExitBadInput;
  }
  options.worker.call_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(flags.step_timeout_seconds * 1000));
  options.workers = flags.workers;
  options.strategy = {*strategy, flags.episode_length, flags.beam_width,
                      flags.neighbours};
  options.objective = *objective;
  options.budget_seconds = flags.budget_seconds;
  options.max_evaluations = flags.max_evaluations;
  options.seed = flags.seed;
  options.run_id = flags.run_id;
  if (!flags.buffer.empty()) {
    size_t pairs = 0;
    absl::StatusOr<PipelineBlocked> blocked =
        LoadBlockList(flags.buffer, &pairs);
    if (!blocked.ok()) {
      err << "error: --buffer: " << blocked.status().message() << "\n";
      return command::ExitCodeOf(blocked.status());
    }
    options.blocked = *std::move(blocked);
    err << "block list of " << flags.buffer << ": " << pairs
        << " (module, pipeline) pairs never reported as best\n";
  }

  std::error_code exists_error;
  const bool episodes_existed =
      std::filesystem::exists(flags.episodes_out, exists_error);
  absl::StatusOr<std::unique_ptr<FileEpisodeSink>> sink =
      FileEpisodeSink::Open(flags.episodes_out);
  if (!sink.ok()) {
    err << "error: " << sink.status().message() << "\n";
    return command::kExitBadInput;
  }
  if ((*sink)->cut_tail_bytes() > 0) {
    err << "note: " << flags.episodes_out << " ended in an incomplete record ("
        << (*sink)->cut_tail_bytes()
        << " bytes: a search stopped while writing it); cut off before "
           "appending: that one episode is lost, every whole record before "
           "it is kept\n";
  }
  auto progress = [&err](const ModuleResult& r, int done, int total) {
    err << "[" << done << "/" << total << "] " << r.input.name << ": ";
    if (!r.status.ok()) {
      err << "error: " << r.status.message() << "\n";
      return;
    }
    err << "ir " << r.reference.ir_count_start << " -> " << r.ir_count
        << " (Oz " << r.reference.ir_count_oz << "), allocated "
        << r.reference.alloc_size_start << " -> " << r.alloc_size << " (Oz "
        << r.reference.alloc_size_oz << "), .text "
        << r.reference.text_size_start << " -> " << r.text_size << " (Oz "
        << r.reference.text_size_oz << "); " << r.episodes << " episodes, "
        << r.evaluations << " steps, " << r.failed_steps << " failed\n";
  };
  absl::StatusOr<std::vector<ModuleResult>> results =
      RunSearch(modules, options, known, **sink, progress);
  if (!results.ok()) {
    err << "error: " << results.status().message() << "\n";
    return command::kExitInternal;
  }
  const std::string best_out = flags.best_out.empty()
                                   ? flags.episodes_out + ".best.json"
                                   : flags.best_out;
  // Best sequences of --best-in found before a miscompile blocked them are
  // not written again.
  std::vector<KnownBest> kept;
  for (KnownBest& k : known) {
    if (IsBlocked(options.blocked, k.best)) {
      err << "dropped the best sequence of " << k.module_name << " ("
          << k.best.module_hash() << ") from --best-in: its pipeline is "
          << "blocked in " << flags.buffer << "\n";
      continue;
    }
    kept.push_back(std::move(k));
  }
  // The default best-sequences file accumulates, as the episodes file
  // beside it does (an earlier run's modules would otherwise be dropped).
  if (flags.best_in.empty() && std::filesystem::exists(best_out)) {
    absl::StatusOr<std::vector<KnownBest>> earlier =
        ReadBestSequences(best_out);
    if (!earlier.ok()) {
      err << "error: cannot merge the earlier best sequences in " << best_out
          << ": " << earlier.status().message()
          << "; move it away or give --best-out\n";
      return command::kExitBadInput;
    }
    for (KnownBest& k : *earlier) {
      if (!IsBlocked(options.blocked, k.best)) kept.push_back(std::move(k));
    }
  }
  MergeBestSequences(BestSequencesOf(*results, *objective), kept);
  const bool measured = Metrics(*results)["modules_measured"].get<int>() > 0;
  // A run that measured nothing leaves the file as it was.
  if (measured) {
    if (absl::Status s = WriteBestSequences(best_out, kept); !s.ok()) {
      err << "error: " << s.message() << "\n";
      return command::kExitInternal;
    }
  }
  nlohmann::json summary = {
      {"strategy", flags.strategy},
      {"objective", flags.objective},
      {"budget_seconds", flags.budget_seconds},
      {"max_evaluations", flags.max_evaluations},
      {"workers", WorkerCount(flags.workers, modules.size())},
      {"convention", "real-build"},
      {"seed", flags.seed},
      {"episodes_out", flags.episodes_out},
      {"best_out", best_out},
      {"best_written", measured},
      {"modules", nlohmann::json::array()}};
  for (const ModuleResult& r : *results)
    summary["modules"].push_back(ResultJson(r));
  summary["metrics"] = Metrics(*results);
  if (flags.json) {
    out << summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    PrintTable(summary, out);
  }
  if (measured) {
    err << "episodes appended to " << flags.episodes_out
        << "; best sequences in " << best_out << "\n";
    return command::kExitOk;
  }
  // Nothing measured: nothing claimed, and no empty episodes file left by
  // this run. Modules that do not compile are the user's to fix (exit 2).
  if (std::error_code error;
      !episodes_existed &&
      std::filesystem::file_size(flags.episodes_out, error) == 0 && !error) {
    std::filesystem::remove(flags.episodes_out, error);
  }
  err << "no module was measured: nothing written to " << best_out << "\n";
  for (const ModuleResult& r : *results) {
    if (!r.status.ok()) return command::ExitCodeOf(r.status);
  }
  return command::kExitInternal;
}

void AddSearchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SearchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "search", "Pass-order search over modules, logging every episode");
  cmd->add_option(
      "--corpus", flags->corpus,
      "corpus directory (manifest.json) or directory of C/C++ sources");
  cmd->add_option("--input", flags->inputs,
                  "a source, .bc or .ll (repeatable)");
  cmd->add_option("--split", flags->split,
                  "only this manifest split (e.g. validation)");
  cmd->add_option("--strategy", flags->strategy,
                  "random, greedy, beam or guided")
      ->capture_default_str();
  cmd->add_option("--objective", flags->objective,
                  "alloc_size (the whole object's allocated bytes), "
                  "text_size (.text alone) or ir_count, or runtime (a "
                  "workload's hot modules, each evaluation a rebuild and a "
                  "staged run)")
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget_seconds,
                  "search seconds per module (runtime: of the whole search)")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  cmd->add_option(
         "--max-evaluations", flags->max_evaluations,
         "stop a module's search after this many actions tried (0: only "
         "--budget); a seeded search ended by this budget gives the same "
         "result on any machine")
      ->capture_default_str()
      ->check(command::NonNegativeNumber());
  cmd->add_option("--max-ir-count", flags->max_ir_count,
                  "leave out corpus modules with a larger unoptimised ir_count "
                  "(manifest); 0: no limit")
      ->capture_default_str()
      ->check(command::NonNegativeNumber());
  cmd->add_option("--run-id", flags->run_id,
                  "prefix of this run's episode ids (default: random); with a "
                  "fixed id a rerun writes the same ids, so give searches "
                  "that differ (seed, strategy, budget) different ids: a "
                  "buffer keeps one episode per id")
      ->check([](const std::string& id) {
        return id.find_first_of(" \t\n/") == std::string::npos
                   ? std::string()
                   : std::string("a run id has no spaces or slashes");
      });
  command::AddRenamedOption(*cmd, "--jobs", "--workers", flags->workers,
                            "modules searched at once, each in a session "
                            "worker process (0: hardware threads)",
                            std::cerr)
      ->capture_default_str()
      ->check(command::NonNegativeNumber());
  cmd->add_option("--episodes-out", flags->episodes_out,
                  "episode file to append to (required)");
  cmd->add_option("--best-in", flags->best_in,
                  "best-sequences file: seeds for guided search");
  cmd->add_option(
      "--best-out", flags->best_out,
      "best-sequences file to write (--best-in merged with this run's); "
      "default EPISODES_OUT.best.json");
  cmd->add_option("--buffer", flags->buffer,
                  "replay buffer whose block list to respect: pipelines a "
                  "miscompile blamed for a module are never reported as its "
                  "best nor written to --best-out");
  cmd->add_flag("--json", flags->json, "print JSON instead of a table");
  cmd->add_option("--seed", flags->seed, "seed of the random choices")
      ->capture_default_str();
  cmd->add_option("--episode-length", flags->episode_length,
                  "random episode length")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  cmd->add_option("--beam-width", flags->beam_width, "beam width")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  cmd->add_option("--neighbours", flags->neighbours,
                  "guided: similar modules whose best sequences are replayed")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  cmd->add_option("--worker-binary", flags->worker_binary,
                  "session worker to spawn (default: next to phaseloop)");
  cmd->add_option("--step-timeout", flags->step_timeout_seconds,
                  "seconds before a step (or module load) counts as hung")
      ->capture_default_str()
      ->check(command::PositiveNumber());
  runtime_search::AddRuntimeSearchOptions(*cmd, flags->runtime);
  cmd->callback([flags, &exit_code] {
    if (flags->objective == "runtime") {
      runtime_search::RuntimeSearchFlags runtime = flags->runtime;
      runtime.buffer = flags->buffer;
      runtime.budget_s = flags->budget_seconds;
      runtime.max_evaluations = flags->max_evaluations;
      runtime.seed = flags->seed;
      runtime.json = flags->json;
      exit_code = runtime_search::RunRuntimeSearchCommand(runtime, std::cout,
                                                          std::cerr);
      return;
    }
    exit_code = RunSearchCommand(*flags, std::cout, std::cerr);
  });
}

}  // namespace phaseloop::search
