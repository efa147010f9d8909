#include "staging_harness/search/search_jobs.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/kafka/consumer.h"
#include "common/kafka/idle_exit.h"
#include "common/kafka/kafka_error.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/producer.h"
#include "common/protobuf/utf8_strings.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "phaseloop/v1/episode.pb.h"
#include "staging_harness/results/stored_episode_sinks.h"
#include "staging_harness/search/search_pool.h"

namespace phaseloop::search {
namespace {

using Clock = std::chrono::steady_clock;

absl::StatusOr<std::string> ModuleBitcode(const ModuleInput& module,
                                          const std::string& opt_level) {
  if (absl::EndsWith(module.path, ".bc") ||
      absl::EndsWith(module.path, ".ll")) {
    return ir::ReadFile(module.path);
  }
  ir::FrontendOptions frontend;
  std::optional<ir::OptLevel> level = ir::ParseOptLevel(opt_level);
  if (!level) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown -O level '", opt_level, "'"));
  }
  frontend.opt_level = *level;
  return ir::CompileToBitcode(module.path, frontend);
}

// Writes `bytes` to a fresh file under $TMPDIR with `suffix`.
absl::StatusOr<std::string> TempFile(const std::string& bytes,
                                     const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      absl::StrCat(dir && *dir ? dir : "/tmp", "/phaseloop-job-XXXXXX", suffix);
  int fd = mkstemps(path.data(), static_cast<int>(suffix.size()));
  if (fd < 0) return absl::InternalError("cannot create a temporary file");
  bool ok = write(fd, bytes.data(), bytes.size()) ==
            static_cast<ssize_t>(bytes.size());
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return path;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SubmitSearchJobs(
    const std::vector<ModuleInput>& modules, const SubmitOptions& options) {
  // NaN fails both comparisons; a budget of 0 or less searched nothing
  // and reported "done".
  if (!(options.budget_seconds > 0 &&
        options.budget_seconds <= kMaxJobBudgetSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--budget ", options.budget_seconds, ": a job's budget is in (0, ",
        kMaxJobBudgetSeconds, "] seconds (a worker polls Kafka between jobs)"));
  }
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = options.bootstrap_servers;
  producer_options.client_id = "phaseloop-search-submit";
  absl::StatusOr<std::unique_ptr<kafka::Producer>> producer =
      kafka::Producer::Create(producer_options);
  if (!producer.ok()) return producer.status();
  // Every job made and checked before any is produced: a module too large
  // for a Kafka message failed the run after earlier jobs had gone out
  // (and were worked), without naming the module or printing their ids.
  std::vector<v1::SearchJob> jobs;
  for (const ModuleInput& module : modules) {
    absl::StatusOr<std::string> bitcode =
        ModuleBitcode(module, module.opt_level.empty() ? options.opt_level
                                                       : module.opt_level);
    if (!bitcode.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "module '", module.name, "': ", bitcode.status().message()));
    }
    v1::SearchJob& job = jobs.emplace_back();
    job.set_bitcode(*bitcode);
    job.set_bitcode_path(module.name);  // a label for people; bytes rule
    job.set_strategy(StrategyName(options.strategy));
    job.set_objective(ObjectiveName(options.objective));
    job.set_budget_seconds(options.budget_seconds);
    job.set_max_evaluations(options.max_evaluations);
    job.set_seed(options.seed);
    job.set_job_id(ir::ContentHash(job.SerializeAsString()).substr(0, 20));
    if (job.ByteSizeLong() > kMaxJobBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "module '", module.name, "': its job is ", job.ByteSizeLong(),
          " bytes, more than a Kafka message takes (", kMaxJobBytes,
          "); nothing was submitted: search it locally with `phaseloop "
          "search --input`, or leave it out"));
    }
  }
  std::vector<std::string> ids;
  for (const v1::SearchJob& job : jobs) {
    absl::Status produced = (*producer)->Produce(
        options.topic, job.job_id(), protobuf::SerializeAsValidUtf8(job));
    if (!produced.ok()) return produced;
    ids.push_back(job.job_id());
  }
  absl::Status flushed = (*producer)->Flush(std::chrono::seconds(60));
  if (!flushed.ok()) return flushed;
  return ids;
}

absl::StatusOr<WorkStats> RunSearchJobWorker(const WorkOptions& options,
                                             const std::atomic<bool>* stop,
                                             std::ostream& log) {
  absl::StatusOr<std::unique_ptr<KafkaEpisodeSink>> sink =
      KafkaEpisodeSink::Create(options.bootstrap_servers,
                               options.episodes_topic, options.spool_dir);
  if (!sink.ok()) return sink.status();
  WorkStats stats;
  const kafka::SpoolRetry& retry = (*sink)->spool_retry();
  stats.spool_delivered = retry.delivered;
  if (std::string said = kafka::SpoolRetryMessage(retry, options.spool_dir);
      !said.empty()) {
    log << "search jobs: " << said << "\n";
  }
  kafka::ConsumerOptions consumer_options;
  consumer_options.bootstrap_servers = options.bootstrap_servers;
  consumer_options.group_id = options.group;
  consumer_options.client_id = "phaseloop-search-worker";
  consumer_options.topics = {options.jobs_topic};
  consumer_options.config = options.consumer_config;
  // A job is worked between two polls: past librdkafka's default 300 s the
  // worker left the group, its commit was refused and the job was worked
  // again, forever. Jobs are bounded by their budget (kMaxJobBudgetSeconds).
  consumer_options.config.emplace("max.poll.interval.ms",
                                  std::to_string(kMaxPollIntervalMs));
  absl::StatusOr<std::unique_ptr<kafka::Consumer>> consumer =
      kafka::Consumer::Create(consumer_options);
  if (!consumer.ok()) return consumer.status();

  kafka::IdleExit idle(options.idle_exit, Clock::now(),
                       options.unassigned_grace);
  absl::Status last_error;  // the last retriable error Poll returned, said
  while (stop == nullptr || !stop->load()) {
    absl::StatusOr<std::optional<kafka::ConsumedMessage>> message =
        (*consumer)->Poll(std::chrono::milliseconds(200));
    if (!message.ok()) {
      if (auto lost = kafka::RecordsLostOf(message.status())) {
        // Jobs deleted from Kafka before any worker took them: nobody will
        // work them; say which, and go on with the rest.
        stats.jobs_lost += lost->count();
        log << "search jobs: " << message.status().message() << "\n";
        if (!options.lost_records_log.empty()) {
          absl::Status recorded = kafka::AppendLostRecords(
              options.lost_records_log,
              kafka::MakeLostRecordsEntry(*lost, options.group,
                                          "search-jobs worker"));
          log << "search jobs: "
              << (recorded.ok() ? "recorded in " + options.lost_records_log
                                : std::string(recorded.message()))
              << "\n";
        }
        continue;
      }
      if (kafka::ClassOf(message.status()) != kafka::ErrorClass::kRetriable) {
        return message.status();
      }
      last_error = message.status();
    }
    if (!message.ok() || !message->has_value()) {
      const bool settled = (*consumer)->GroupSettled();
      if (idle.ShouldCheckBroker(settled, Clock::now())) {
        // No cluster id: no broker ever answered (an empty cluster answers).
        if (!(*consumer)->BrokerAnswered(std::chrono::seconds(1))) {
          (void)(*consumer)->Close();
          return kafka::NoBrokerAnswered("the worker",
                                         options.bootstrap_servers,
                                         idle.waited(Clock::now()), last_error);
        }
        idle.ClusterAnswered();  // a slow join: wait for it, as ever
      }
      if (idle.Due(settled, Clock::now())) break;
      continue;
    }
    idle.Input(Clock::now());
    const kafka::ConsumedMessage& m = **message;
    v1::SearchJob job;
    std::optional<Strategy> strategy;
    std::optional<Objective> objective;
    if (!job.ParseFromString(m.value) || job.job_id().empty() ||
        !(strategy = ParseStrategy(job.strategy())) ||
        !(objective = ParseObjective(job.objective())) ||
        (job.bitcode().empty() && job.bitcode_path().empty()) ||
        !(job.budget_seconds() > 0 &&
          job.budget_seconds() <= kMaxJobBudgetSeconds)) {
      ++stats.malformed_jobs;
      log << "job at " << m.topic << "/" << m.partition << "@" << m.offset
          << " is not a valid SearchJob (a job_id, a known strategy and "
             "objective, bitcode or a path, a budget in (0, "
          << kMaxJobBudgetSeconds << "] s); skipped\n";
      (void)(*consumer)->CommitMessage(m);
      continue;
    }
    std::string path = job.bitcode_path();
    std::string temp;
    if (!job.bitcode().empty()) {
      absl::StatusOr<std::string> written = TempFile(job.bitcode(), ".bc");
      if (!written.ok()) return written.status();
      path = temp = *written;
    }
    SearchRunOptions run;
    run.worker.worker_binary = options.worker_binary;
    run.workers = 1;
    run.strategy.strategy = *strategy;
    run.objective = *objective;
    run.budget_seconds = job.budget_seconds();
    run.max_evaluations = job.max_evaluations();
    run.seed = job.seed();
    run.run_id = job.job_id();
    run.stop = stop;  // a stop signal ends the job's search at its next step
    ModuleInput input{job.job_id(), path, ""};
    int64_t episodes_before = 0;
    // Before the search: it flushes the sink itself, spooling what Kafka
    // did not take (reported as "produced" when counted after it).
    const int64_t kept_before = (*sink)->kept_for_retry();
    struct CountingSink : EpisodeSink {
      EpisodeSink* inner;
      int64_t* count;
      absl::Status Write(const v1::Episode& e) override {
        ++*count;
        return inner->Write(e);
      }
      absl::Status Flush() override { return inner->Flush(); }
    } counting;
    counting.inner = sink->get();
    counting.count = &episodes_before;
    absl::StatusOr<std::vector<ModuleResult>> results =
        RunSearch({input}, run, {}, counting);
    if (!temp.empty()) unlink(temp.c_str());
    if (!results.ok()) return results.status();
    absl::Status flushed = (*sink)->Flush();
    if (!flushed.ok())
      return flushed;  // not committed: another member redoes it
    const int64_t kept = (*sink)->kept_for_retry() - kept_before;
    if (kept > 0) {
      stats.episodes_kept_for_retry += kept;
      log << "job " << job.job_id() << ": "
          << kafka::KeptForRetryMessage(kept, (*sink)->spool_dir()) << "\n";
    }
    const bool cut_short =
        !results->empty() &&
        (results->front().stopped ||
         (stop != nullptr && stop->load() && !results->front().status.ok()));
    if (cut_short) {
      // Stopped during the job (its search ended at the next step, or its
      // session worker died of the same Ctrl-C): its episodes so far are
      // out (or spooled), the job not committed, so the group's next owner
      // of the partition works it whole. A job that ran its whole budget
      // before the signal is committed as done; the loop then ends.
      stats.episodes += episodes_before - kept;
      stats.jobs_stopped.push_back(job.job_id());
      log << "job " << job.job_id() << ": stopped by a signal after "
          << episodes_before
          << " episodes, before its budget; not committed: the next worker "
             "of its partition works it again\n";
      log.flush();
      break;
    }
    absl::Status committed = (*consumer)->CommitMessage(m);
    if (!committed.ok()) {
      // A rebalance (another worker joining or leaving) refuses commits for
      // a moment. The episodes are already out; whoever owns the partition
      // next may work the job again, which rewrites the same episode ids.
      if (kafka::ClassOf(committed) != kafka::ErrorClass::kRetriable) {
        return committed;
      }
      log << "job " << job.job_id() << ": offset not committed ("
          << committed.message() << "); it may be worked again\n";
    }
    // Produced: what Kafka took; the rest is counted as kept for retry.
    stats.episodes += episodes_before - kept;
    const ModuleResult& result = results->front();
    if (!result.status.ok()) ++stats.failed_jobs;
    stats.jobs_done.push_back(job.job_id());
    log << "job " << job.job_id() << " done: " << episodes_before
        << " episodes, " << job.objective() << " "
        << ResultValue(result, *objective)
        << (result.status.ok()
                ? ""
                : " (" + std::string(result.status.message()) + ")")
        << "\n";
    log.flush();
  }
  (void)(*consumer)->Close();
  return stats;
}

}  // namespace phaseloop::search
