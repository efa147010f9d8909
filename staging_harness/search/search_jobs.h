#ifndef PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_JOBS_H_
#define PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_JOBS_H_

// Distributed search through Kafka. `SubmitSearchJobs` produces one
// SearchJob per module (the unoptimised bitcode inside, so workers need no
// shared files) to phaseloop.search.jobs, keyed by a job id that is a hash
// of the job's content: submitting the same work twice names the same jobs.
// `RunSearchJobWorker` is one member of a consumer group of workers, on any
// number of machines: it searches each job's module with the job's strategy
// over local session workers and produces every episode to
// phaseloop.search.episodes (keyed by module_hash), which `phaseloop buffer
// ingest` stores. A job's offset is committed only after all its episodes
// are acknowledged, so a worker killed mid-job leaves the job to another
// member (at least once); episode ids derive from the job id, so a job run
// twice overwrites its episodes in the buffer rather than doubling them.

#include <atomic>
#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/idle_exit.h"
#include "staging_harness/search/greedy_search.h"
#include "staging_harness/search/search_inputs.h"
#include "staging_harness/search/strategies.h"

namespace phaseloop::search {

// The longest budget a job may have, and how long a worker may go without
// polling Kafka (librdkafka's max.poll.interval.ms; its default, 300 s, made
// longer jobs leave the group and be worked again forever).
inline constexpr double kMaxJobBudgetSeconds = 12 * 3600;
inline constexpr int kMaxPollIntervalMs = 24 * 3600 * 1000;
// The largest job submit sends: librdkafka's default message.max.bytes
// (1,000,000) less room for the record's key and headers.
inline constexpr size_t kMaxJobBytes = 990000;

struct SubmitOptions {
  std::string bootstrap_servers;
  std::string topic = "phaseloop.search.jobs";
  Strategy strategy = Strategy::kRandom;
  Objective objective = Objective::kAllocSize;
  double budget_seconds = 10;
  int64_t max_evaluations = 0;  // per module; 0 = only the clock limits
  uint64_t seed = 1;
  std::string opt_level = "Oz";  // frontend level for C/C++ sources
};

// Returns the job ids, in module order. Sources are compiled here (the
// real-build frontend at options.opt_level); .bc/.ll files are sent as they
// are.
absl::StatusOr<std::vector<std::string>> SubmitSearchJobs(
    const std::vector<ModuleInput>& modules, const SubmitOptions& options);

struct WorkOptions {
  std::string bootstrap_servers;
  std::string group = "phaseloop-search-workers";
  std::string jobs_topic = "phaseloop.search.jobs";
  std::string episodes_topic = "phaseloop.search.episodes";
  std::string worker_binary;  // the session worker
  // Episodes Kafka did not acknowledge are kept here and produced again
  // first by the next worker started with it (kafka::SpoolDirPath(state,
  // "episodes")); "": a job whose episodes are not acknowledged fails the
  // worker (the job is left uncommitted for another member).
  std::string spool_dir;
  // Lost jobs are recorded here (kafka::LostRecordsLogPath); "": not.
  std::string lost_records_log;
  // Return after this long without a job while the group is settled,
  // partitions held or none (0: run until *stop); Unavailable when it never
  // settled in unassigned_grace (at least idle_exit) and no broker ever
  // answered (kafka/idle_exit.h).
  std::chrono::milliseconds idle_exit{0};
  std::chrono::milliseconds unassigned_grace = kafka::kUnassignedGrace;
  std::map<std::string, std::string> consumer_config;
};

struct WorkStats {
  std::vector<std::string> jobs_done;
  int64_t episodes = 0;  // produced (acknowledged by Kafka)
  int64_t malformed_jobs = 0;
  int64_t failed_jobs = 0;  // the module could not be searched
  // Jobs deleted from Kafka (retention) before this worker's group read
  // them; each gap is logged with its partition and offsets.
  int64_t jobs_lost = 0;
  // Episodes kept in the spool for a later run (Kafka did not acknowledge
  // them), and spooled episodes of an earlier run delivered at start.
  int64_t episodes_kept_for_retry = 0;
  int64_t spool_delivered = 0;
  // Jobs a stop signal ended before their budget, left uncommitted.
  std::vector<std::string> jobs_stopped;
};

// One line per job on `log`, one per gap of lost jobs (also recorded in
// lost_records_log), one per job whose episodes went to the spool. Errors:
// Kafka fatal errors, a worker that cannot start.
absl::StatusOr<WorkStats> RunSearchJobWorker(const WorkOptions& options,
                                             const std::atomic<bool>* stop,
                                             std::ostream& log);

}  // namespace phaseloop::search

#endif  // PHASELOOP_STAGING_HARNESS_SEARCH_SEARCH_JOBS_H_
