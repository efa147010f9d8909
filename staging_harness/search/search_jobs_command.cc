#include "staging_harness/search/search_jobs_command.h"

#include <iostream>

#include "common/command/exit_code.h"
#include "common/command/number_checks.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/state_dir.h"
#include "staging_harness/search/search_command.h"
#include "staging_harness/search/search_jobs.h"

namespace phaseloop::search {
namespace {

struct JobsFlags {
  std::string bootstrap;
  std::string corpus;
  std::string split;
  std::vector<std::string> inputs;
  std::string strategy = "random";
  std::string objective = "alloc_size";
  double budget_seconds = 10;
  int64_t max_evaluations = 0;
  uint64_t seed = 1;
  std::string group = "phaseloop-search-workers";
  std::string worker_binary;
  int64_t idle_exit_ms = 0;
};

int Submit(const JobsFlags& flags) {
  std::optional<Strategy> strategy = ParseStrategy(flags.strategy);
  std::optional<Objective> objective = ParseObjective(flags.objective);
  if (!strategy || !objective) {
    std::cerr << "phaseloop search-jobs submit: unknown "
              << (strategy ? "--objective '" + flags.objective +
                                 "' (alloc_size, text_size or ir_count)"
                           : "--strategy '" + flags.strategy +
                                 "' (random, greedy, beam or guided)")
              << "\n";
    return command::kExitBadInput;
  }
  std::vector<ModuleInput> modules;
  std::vector<std::string> warnings;
  if (!flags.corpus.empty()) {
    auto listed = ListCorpus(flags.corpus, flags.split, &warnings);
    if (!listed.ok()) {
      std::cerr << "phaseloop search-jobs submit: " << listed.status().message()
                << "\n";
      return command::kExitBadInput;
    }
    modules = std::move(*listed);
  }
  for (const std::string& path : flags.inputs) {
    auto input = InputFile(path);
    if (!input.ok()) {
      std::cerr << "phaseloop search-jobs submit: " << input.status().message()
                << "\n";
      return command::kExitBadInput;
    }
    modules.push_back(*input);
  }
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
  if (modules.empty()) {
    std::cerr << "phaseloop search-jobs submit: no modules; pass --corpus DIR "
                 "or --input FILE\n";
    return command::kExitBadInput;
  }
  SubmitOptions options;
  options.bootstrap_servers = flags.bootstrap;
  options.strategy = *strategy;
  options.objective = *objective;
  options.budget_seconds = flags.budget_seconds;
  options.max_evaluations = flags.max_evaluations;
  options.seed = flags.seed;
  auto ids = SubmitSearchJobs(modules, options);
  if (!ids.ok()) {
    std::cerr << "phaseloop search-jobs submit: " << ids.status().message()
              << "\n";
    return ids.status().code() == absl::StatusCode::kInvalidArgument
               ? command::kExitBadInput
               : command::kExitInternal;
  }
  for (size_t i = 0; i < ids->size(); ++i) {
    std::cout << (*ids)[i] << "\t" << modules[i].name << "\n";
  }
  std::cerr << "submitted " << ids->size() << " search jobs\n";
  return command::kExitOk;
}

int Work(const JobsFlags& flags) {
  if (flags.idle_exit_ms < 0) {
    std::cerr << "phaseloop search-jobs work: --exit-when-idle-ms must be >= 0 "
                 "(0: until SIGTERM), got "
              << flags.idle_exit_ms << "\n";
    return command::kExitBadInput;
  }
  WorkOptions options;
  options.bootstrap_servers = flags.bootstrap;
  options.group = flags.group;
  options.worker_binary =
      flags.worker_binary.empty() ? DefaultWorkerBinary() : flags.worker_binary;
  if (options.worker_binary.empty()) {
    std::cerr << "phaseloop search-jobs work: no session worker next to this "
                 "binary; pass --worker-binary\n";
    return command::kExitBadInput;
  }
  options.idle_exit = std::chrono::milliseconds(flags.idle_exit_ms);
  const std::string state = kafka::DefaultStateDir();
  options.spool_dir = kafka::SpoolDirPath(state, "episodes");
  options.lost_records_log = kafka::LostRecordsLogPath(state);
  auto stats =
      RunSearchJobWorker(options, command::StopFlagOnSignals(), std::cout);
  if (!stats.ok()) {
    std::cerr << "phaseloop search-jobs work: " << stats.status().message()
              << "\n(jobs not finished are left for other workers)\n";
    // No --kafka, a bootstrap that does not parse: bad input, as submit
    // and buffer ingest say it.
    return stats.status().code() == absl::StatusCode::kInvalidArgument
               ? command::kExitBadInput
               : command::kExitInternal;
  }
  std::cerr << "worked " << stats->jobs_done.size() << " jobs, "
            << stats->episodes << " episodes produced, " << stats->failed_jobs
            << " modules could not be searched, " << stats->malformed_jobs
            << " malformed jobs skipped";
  if (stats->episodes_kept_for_retry > 0) {
    std::cerr << "; "
              << kafka::KeptForRetryMessage(stats->episodes_kept_for_retry,
                                            options.spool_dir);
  }
  if (!stats->jobs_stopped.empty()) {
    std::cerr << "; job " << stats->jobs_stopped.front()
              << " stopped before its budget and left for the next worker";
  }
  if (stats->jobs_lost > 0) {
    std::cerr << "; " << stats->jobs_lost
              << " jobs LOST (deleted from Kafka before any worker read them; "
                 "recorded in "
              << options.lost_records_log << ")";
  }
  std::cerr << "\n";
  return command::kExitOk;
}

}  // namespace

void AddSearchJobsCommand(CLI::App& app, int& exit_code) {
  CLI::App* jobs = command::AddCommandGroup(
      app, "search-jobs",
      "Distributed search through Kafka: submit jobs, work them");

  auto [submit, submit_flags] = command::AddSubcommand<JobsFlags>(
      *jobs, "submit",
      "Produce one search job per module to phaseloop.search.jobs", exit_code,
      Submit);
  command::AddKafkaOption(*submit, submit_flags->bootstrap);
  submit->add_option(
      "--corpus", submit_flags->corpus,
      "corpus directory (manifest.json) or directory of sources");
  submit->add_option("--split", submit_flags->split,
                     "only this manifest split");
  submit->add_option("--input", submit_flags->inputs,
                     "a source, .bc or .ll file");
  submit
      ->add_option("--strategy", submit_flags->strategy,
                   "random, greedy, beam or guided")
      ->capture_default_str();
  submit
      ->add_option("--objective", submit_flags->objective,
                   "alloc_size (whole object), text_size or ir_count")
      ->capture_default_str();
  submit
      ->add_option("--budget", submit_flags->budget_seconds,
                   "search seconds per module")
      ->capture_default_str();
  submit
      ->add_option("--max-evaluations", submit_flags->max_evaluations,
                   "stop a module's search after this many actions tried (0: "
                   "only --budget); a seeded job ended by this budget gives "
                   "the same episodes on any worker")
      ->capture_default_str()
      ->check(command::NonNegativeNumber());
  submit->add_option("--seed", submit_flags->seed, "seed")
      ->capture_default_str();

  auto [work, work_flags] = command::AddSubcommand<JobsFlags>(
      *jobs, "work",
      "Work search jobs as a member of a consumer group; episodes go "
      "to phaseloop.search.episodes",
      exit_code, Work);
  command::AddKafkaOption(*work, work_flags->bootstrap);
  work->add_option("--group", work_flags->group,
                   "consumer group of the workers")
      ->capture_default_str();
  work->add_option("--worker-binary", work_flags->worker_binary,
                   "session worker (default: next to phaseloop)");
  command::AddRenamedOption(*work, "--exit-when-idle-ms", "--idle-exit-ms",
                            work_flags->idle_exit_ms,
                            "stop after this long without a job once the "
                            "group has settled (0: until SIGTERM); exit 1 "
                            "when no broker answered in 30 s (or this long)",
                            std::cerr);
}

}  // namespace phaseloop::search
