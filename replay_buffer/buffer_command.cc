#include "replay_buffer/buffer_command.h"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <ostream>

#include "absl/strings/match.h"
#include "common/command/exit_code.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/kafka/delivery_spool.h"
#include "common/kafka/lost_records_log.h"
#include "common/kafka/producer.h"
#include "common/process/shell_quote.h"
#include "nlohmann/json.hpp"
#include "replay_buffer/buffer_transfer.h"
#include "replay_buffer/kafka_ingest.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::replay_buffer {
namespace {

int Fail(const char* command, const absl::Status& status, std::ostream& err) {
  err << "phaseloop buffer " << command << ": " << status.message() << "\n";
  return command::ExitCodeOf(status);
}

// "A", or "A and B": the topics an ingest reads.
std::string TopicsRead(const IngestOptions& options) {
  if (options.topic.empty()) return options.decisions_topic;
  if (options.decisions_topic.empty()) return options.topic;
  return options.topic + " and " + options.decisions_topic;
}

std::string Json(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace);
}

void PrintJson(const std::string& buffer, const BufferStats& s,
               std::ostream& out) {
  out << std::setprecision(6);
  out << "{\"buffer\": " << Json(buffer)
      << ", \"schema_version\": " << s.schema_version << ", \"tables\": {";
  const char* sep = "";
  for (const auto& [table, rows] : s.table_rows) {
    out << sep << Json(table) << ": " << rows;
    sep = ", ";
  }
  out << "}, \"episodes\": [";
  sep = "";
  for (const auto& g : s.episodes) {
    out << sep << "{\"split\": " << Json(g.split)
        << ", \"objective\": " << Json(g.objective)
        << ", \"behaviour_policy\": " << Json(g.behaviour_policy)
        << ", \"episodes\": " << g.episodes << ", \"steps\": " << g.steps
        << "}";
    sep = ", ";
  }
  out << "], \"rewards\": [";
  sep = "";
  for (const auto& r : s.rewards) {
    out << sep << "{\"source\": " << Json(r.source)
        << ", \"rewards\": " << r.rewards << ", \"mean\": " << r.mean
        << ", \"relative\": " << r.relative
        << ", \"relative_mean\": " << r.relative_mean << "}";
    sep = ", ";
  }
  out << "], \"best_vs_oz\": [";
  sep = "";
  for (const auto& b : s.best_vs_oz) {
    out << sep << "{\"objective\": " << Json(b.objective)
        << ", \"modules\": " << b.modules
        << ", \"better_than_oz\": " << b.better_than_oz
        << ", \"geomean_oz_ratio\": " << b.geomean_oz_ratio << "}";
    sep = ", ";
  }
  out << "], \"decisions\": [";
  sep = "";
  for (const auto& [key, count] : s.decisions) {
    out << sep << "{\"outcome\": " << Json(key.first)
        << ", \"reason\": " << Json(key.second) << ", \"count\": " << count
        << "}";
    sep = ", ";
  }
  out << "], \"miscompiles\": [";
  sep = "";
  for (const auto& [verdict, count] : s.miscompiles) {
    out << sep << "{\"verdict\": " << Json(verdict) << ", \"count\": " << count
        << "}";
    sep = ", ";
  }
  out << "], \"blocked_pipelines\": " << s.blocked_pipelines << "}\n";
}

void PrintTable(const std::string& buffer, const BufferStats& s,
                std::ostream& out) {
  auto left = [&](int width) -> std::ostream& {
    return out << std::left << std::setw(width);
  };
  auto right = [&](int width) -> std::ostream& {
    return out << std::right << std::setw(width);
  };
  out << "replay buffer " << buffer << " (schema version " << s.schema_version
      << ")\n\n";
  left(20) << "table";
  right(12) << "rows"
            << "\n";
  for (const auto& [table, rows] : s.table_rows) {
    left(20) << table;
    right(12) << rows << "\n";
  }
  out << "\nepisodes by split / objective / behaviour policy\n";
  left(12) << "split";
  left(12) << "objective";
  left(24) << "behaviour";
  right(10) << "episodes";
  right(10) << "steps"
            << "\n";
  for (const auto& g : s.episodes) {
    left(12) << (g.split.empty() ? "(no module)" : g.split);
    left(12) << g.objective;
    left(24) << g.behaviour_policy;
    right(10) << g.episodes;
    right(10) << g.steps << "\n";
  }
  out << "\nfinal rewards by source\n";
  left(12) << "source";
  right(10) << "rewards";
  right(12) << "mean";
  right(10) << "relative";
  right(14) << "relative mean"
            << "\n";
  for (const auto& r : s.rewards) {
    left(12) << r.source;
    right(10) << r.rewards;
    right(12) << std::fixed << std::setprecision(4) << r.mean;
    right(10) << r.relative;
    right(14) << r.relative_mean << "\n";
  }
  out << "\nbest-known sequences vs clang-16 -Oz (ratio > 1: smaller)\n";
  left(12) << "objective";
  right(10) << "modules";
  right(16) << "better than Oz";
  right(18) << "geomean Oz/best"
            << "\n";
  for (const auto& b : s.best_vs_oz) {
    left(12) << b.objective;
    right(10) << b.modules;
    right(16) << b.better_than_oz;
    right(18) << std::fixed << std::setprecision(4) << b.geomean_oz_ratio
              << "\n";
  }
  out << "\ndecisions by outcome / reason\n";
  for (const auto& [key, count] : s.decisions) {
    left(14) << key.first;
    left(28) << (key.second.empty() ? "-" : key.second);
    right(8) << count << "\n";
  }
  out << "\nmiscompiles by verdict (`phaseloop buffer miscompiles` lists "
         "them)\n";
  for (const auto& [verdict, count] : s.miscompiles) {
    left(22) << verdict;
    right(8) << count << "\n";
  }
  out << "blocked (module, pipeline) pairs: " << s.blocked_pipelines << "\n";
}

nlohmann::json MiscompileJson(const v1::Miscompile& m) {
  nlohmann::json blamed = nlohmann::json::array();
  for (const v1::BlamedPipeline& b : m.blamed()) {
    blamed.push_back(
        {{"module_hash", b.module_hash()}, {"pipeline", b.pipeline()}});
  }
  return {{"miscompile_id", m.miscompile_id()},
          {"workload", m.workload()},
          {"build_id", m.build_id()},
          {"policy_version", m.policy_version()},
          {"candidate", m.candidate()},
          {"run", m.run()},
          {"what", m.what()},
          {"detail", m.detail()},
          {"verdict", m.verdict()},
          {"blamed", blamed},
          {"unix_time_ms", m.unix_time_ms()}};
}

// A buffer a report only reads: opened read-only, so that a buffer the
// user may not write (another account's, a mounted snapshot) can be read,
// and an exported snapshot keeps its bytes (a writable open switched it to
// WAL). A buffer of an older schema is opened for writing, once, to
// migrate it, as before.
absl::StatusOr<std::unique_ptr<ReplayStore>> OpenToRead(
    const std::string& buffer) {
  OpenOptions options;
  options.create = false;
  options.read_only = true;
  absl::StatusOr<std::unique_ptr<ReplayStore>> store =
      OpenReplayStore(buffer, options);
  if (!absl::IsFailedPrecondition(store.status()) ||
      !absl::StrContains(store.status().message(),
                         "older than this phaseloop")) {
    return store;
  }
  options.read_only = false;
  return OpenReplayStore(buffer, options);
}

}  // namespace

int RunBufferStats(const std::string& buffer, bool json, std::ostream& out,
                   std::ostream& err) {
  absl::StatusOr<std::unique_ptr<ReplayStore>> store = OpenToRead(buffer);
  if (!store.ok()) return Fail("stats", store.status(), err);
  absl::StatusOr<BufferStats> stats = (*store)->Stats();
  if (!stats.ok()) return Fail("stats", stats.status(), err);
  if (json) {
    PrintJson(buffer, *stats, out);
  } else {
    PrintTable(buffer, *stats, out);
  }
  return command::kExitOk;
}

int RunBufferMiscompiles(const std::string& buffer, bool json,
                         std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::unique_ptr<ReplayStore>> store = OpenToRead(buffer);
  if (!store.ok()) return Fail("miscompiles", store.status(), err);
  absl::StatusOr<std::vector<v1::Miscompile>> miscompiles =
      (*store)->ReadMiscompiles();
  if (!miscompiles.ok()) return Fail("miscompiles", miscompiles.status(), err);
  absl::StatusOr<std::vector<BlockedPipeline>> blocked =
      (*store)->BlockedPipelines("");
  if (!blocked.ok()) return Fail("miscompiles", blocked.status(), err);
  if (json) {
    nlohmann::json j = {{"buffer", buffer},
                        {"miscompiles", nlohmann::json::array()},
                        {"blocked", nlohmann::json::array()}};
    for (const v1::Miscompile& m : *miscompiles) {
      j["miscompiles"].push_back(MiscompileJson(m));
    }
    for (const BlockedPipeline& b : *blocked) {
      j["blocked"].push_back({{"module_hash", b.module_hash},
                              {"pipeline", b.pipeline},
                              {"miscompile_id", b.miscompile_id},
                              {"unix_time_ms", b.unix_time_ms}});
    }
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return command::kExitOk;
  }
  out << "replay buffer " << buffer << ": " << miscompiles->size()
      << " miscompiles, " << blocked->size()
      << " blocked (module, pipeline) pairs\n";
  for (const v1::Miscompile& m : *miscompiles) {
    out << "\n"
        << m.miscompile_id() << " [" << m.verdict() << "]\n  " << m.workload()
        << " " << m.run() << ", " << m.what() << ": " << m.detail()
        << "\n  candidate " << m.candidate() << ", build " << m.build_id()
        << ", policy " << m.policy_version() << "\n";
    for (const v1::BlamedPipeline& b : m.blamed()) {
      out << "  blames module " << b.module_hash() << ": " << b.pipeline()
          << "\n";
    }
  }
  if (!blocked->empty())
    out << "\nblocked (search and the learner skip them)\n";
  for (const BlockedPipeline& b : *blocked) {
    out << "  " << b.module_hash << "  " << b.pipeline << "\n";
  }
  return command::kExitOk;
}

int RunBufferExport(const std::string& buffer, const std::string& out_path,
                    std::ostream& out, std::ostream& err) {
  absl::Status status = ExportBuffer(buffer, out_path);
  if (!status.ok()) return Fail("export", status, err);
  out << "exported a snapshot of " << buffer << " to " << out_path
      << " (a replay buffer file: `phaseloop buffer import --in "
      << process::ShellWord(out_path) << "` merges it into another)\n";
  return command::kExitOk;
}

int RunBufferImport(const std::string& buffer, const std::string& in_path,
                    std::ostream& out, std::ostream& err) {
  {  // A bad input must not leave a new, empty buffer behind, nor part of
     // itself: check it whole first (a damaged page stopped the import part
     // way, every time).
    OpenOptions input;
    input.create = false;
    input.read_only = true;
    absl::StatusOr<std::unique_ptr<ReplayStore>> check =
        OpenReplayStore(in_path, input);
    if (!check.ok()) return Fail("import", check.status(), err);
    if (absl::Status whole = (*check)->CheckIntegrity(); !whole.ok()) {
      return Fail("import", whole, err);
    }
  }
  absl::StatusOr<std::unique_ptr<ReplayStore>> store = OpenReplayStore(buffer);
  if (!store.ok()) return Fail("import", store.status(), err);
  // SIGINT/SIGTERM end it between transactions, said (it exited 130 with
  // nothing said and part of the snapshot merged).
  absl::StatusOr<int64_t> records =
      ImportBuffer(in_path, **store, command::StopFlagOnSignals());
  if (absl::IsCancelled(records.status())) {
    err << "phaseloop buffer import: " << records.status().message() << " into "
        << buffer
        << ": each record stored is whole; run the same import again to "
           "complete it (records already there are upserted, unchanged)\n";
    return command::kExitStopped;
  }
  if (!records.ok()) {
    err << "phaseloop buffer import: " << records.status().message()
        << "\n(batches already imported stay, upserted by id; once the "
           "cause is fixed, running the import again completes it)\n";
    return command::ExitCodeOf(records.status());
  }
  out << "imported " << *records << " records from " << in_path << " into "
      << buffer << " (upserted by id: importing again changes nothing)\n";
  return command::kExitOk;
}

int RunBufferIngest(const std::string& buffer, const IngestOptions& options,
                    std::ostream& out, std::ostream& err) {
  if (options.topic.empty() && options.decisions_topic.empty()) {
    err << "phaseloop buffer ingest: --topic and --decisions-topic are both "
           "empty; name at least one topic to read\n";
    return command::kExitBadInput;
  }
  if (options.bootstrap_servers.empty()) {  // before the buffer is created
    err << "phaseloop buffer ingest: no Kafka bootstrap servers; pass --kafka "
           "HOST:PORT[,...] (`phaseloop kafka serve` starts a local cluster)\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<std::unique_ptr<ReplayStore>> store = OpenReplayStore(buffer);
  if (!store.ok()) return Fail("ingest", store.status(), err);
  kafka::ProducerOptions producer_options;
  producer_options.bootstrap_servers = options.bootstrap_servers;
  producer_options.client_id = "phaseloop-buffer-ingest";
  absl::StatusOr<std::unique_ptr<kafka::Producer>> dead_letters =
      kafka::Producer::Create(producer_options);
  if (!dead_letters.ok()) return Fail("ingest", dead_letters.status(), err);
  // Dead letters an earlier run could not deliver go first.
  absl::StatusOr<kafka::DeliverySpool> dead_letter_spool =
      kafka::DeliverySpool::Open(
          kafka::SpoolDirPath(kafka::DefaultStateDir(), "dead-letters"));
  if (dead_letter_spool.ok()) {
    absl::StatusOr<kafka::SpoolRetry> retried =
        dead_letter_spool->Retry(**dead_letters, std::chrono::seconds(10));
    if (retried.ok()) {
      if (std::string said =
              kafka::SpoolRetryMessage(*retried, dead_letter_spool->dir());
          !said.empty()) {
        err << "phaseloop buffer ingest: dead letters' " << said << "\n";
      }
    } else {
      err << "phaseloop buffer ingest: dead-letter spool: "
          << retried.status().message() << "\n";
    }
  }
  IngestOptions run = options;  // losses go to the machine's log by default
  if (run.lost_records_log.empty()) {
    run.lost_records_log = kafka::LostRecordsLogPath(kafka::DefaultStateDir());
  }
  absl::StatusOr<IngestStats> stats = RunKafkaIngest(
      **store, run, dead_letters->get(), command::StopFlagOnSignals(),
      dead_letter_spool.ok() ? &*dead_letter_spool : nullptr);
  // Dead letters Kafka did not acknowledge are kept for the next run (the
  // lost-records log and stderr already name every loss).
  if (dead_letter_spool.ok()) {
    absl::StatusOr<int64_t> kept = dead_letter_spool->KeepUndelivered(
        **dead_letters, std::chrono::seconds(10));
    // And those the producer refused at once (kept as they came).
    if (kept.ok() && stats.ok()) *kept += stats->dead_letters_spooled;
    if (!kept.ok()) {
      err << "phaseloop buffer ingest: dead letters not kept: "
          << kept.status().message() << "\n";
    } else if (*kept > 0) {
      err << "phaseloop buffer ingest: dead letters: "
          << kafka::KeptForRetryMessage(*kept, dead_letter_spool->dir())
          << "\n";
    }
  } else {
    err << "phaseloop buffer ingest: " << dead_letter_spool.status().message()
        << "\n";
  }
  if (!stats.ok()) {
    err << "phaseloop buffer ingest: " << stats.status().message()
        << "\n(what was stored stays; running again resumes after it)\n";
    return command::kExitInternal;
  }
  out << "ingested " << stats->episodes << " episodes and " << stats->decisions
      << " decisions from " << stats->records << " records of "
      << TopicsRead(options) << " into " << buffer << " in "
      << stats->transactions << " transactions";
  if (stats->malformed > 0) {
    out << "; " << stats->malformed << " malformed records dead-lettered";
  }
  if (stats->recreated_partitions > 0) {
    out << "; " << stats->recreated_partitions
        << " partitions recreated since the stored offsets (read from their "
           "start)";
  }
  if (stats->records_lost > 0) {
    out << "; " << stats->records_lost << " records LOST (deleted from Kafka "
        << "before they were read, in " << stats->losses << " gaps)";
  }
  out << "\n";
  if (stats->records_lost > 0) {
    std::string topics;
    for (const auto& [topic, count] : stats->records_lost_by_topic) {
      topics += (topics.empty() ? "" : " and ") + topic;
    }
    err << "phaseloop buffer ingest: " << stats->records_lost << " records of "
        << topics
        << " were deleted from Kafka before they were read (the lines above "
           "name the partitions and offsets); they are not in the buffer";
    if (!run.lost_records_log.empty()) {
      err << "; each gap is recorded in " << run.lost_records_log;
    }
    err << "\n";
    return command::kExitInternal;
  }
  return command::kExitOk;
}

void AddBufferCommand(CLI::App& app, int& exit_code) {
  CLI::App* buffer = command::AddCommandGroup(
      app, "buffer",
      "The replay buffer: statistics, miscompiles, export and import");
  struct Flags {
    std::string buffer, file;
    bool json = false;
  };

  auto [stats, stats_flags] = command::AddSubcommand<Flags>(
      *buffer, "stats",
      "Rows per table, episodes per split/objective/behaviour, "
      "rewards per source, best sequences vs -Oz",
      exit_code, [](const Flags& f) {
        return RunBufferStats(f.buffer, f.json, std::cout, std::cerr);
      });
  stats->add_option("--buffer", stats_flags->buffer, "replay buffer file")
      ->required();
  stats->add_flag("--json", stats_flags->json, "print JSON");

  auto [miscompiles, miscompiles_flags] = command::AddSubcommand<Flags>(
      *buffer, "miscompiles",
      "Miscompiles staging found (outputs unlike the reference's) and the "
      "(module, pipeline) pairs they block",
      exit_code, [](const Flags& f) {
        return RunBufferMiscompiles(f.buffer, f.json, std::cout, std::cerr);
      });
  miscompiles
      ->add_option("--buffer", miscompiles_flags->buffer, "replay buffer file")
      ->required();
  miscompiles->add_flag("--json", miscompiles_flags->json, "print JSON");

  auto [export_command, export_flags] = command::AddSubcommand<Flags>(
      *buffer, "export",
      "Write a consistent snapshot of a buffer to a new file", exit_code,
      [](const Flags& f) {
        return RunBufferExport(f.buffer, f.file, std::cout, std::cerr);
      });
  export_command
      ->add_option("--buffer", export_flags->buffer, "replay buffer file")
      ->required();
  export_command
      ->add_option("--out", export_flags->file,
                   "new file to write (must not exist)")
      ->required();

  auto [import_command, import_flags] = command::AddSubcommand<Flags>(
      *buffer, "import", "Merge an exported buffer into a buffer (idempotent)",
      exit_code, [](const Flags& f) {
        return RunBufferImport(f.buffer, f.file, std::cout, std::cerr);
      });
  import_command
      ->add_option("--buffer", import_flags->buffer,
                   "replay buffer file to merge into (created if missing)")
      ->required();
  import_command
      ->add_option("--in", import_flags->file, "exported buffer file to read")
      ->required();

  struct IngestFlags {
    std::string buffer;
    IngestOptions options;
    int64_t idle_exit_ms = 0;
  };
  auto [ingest, ingest_flags] = command::AddSubcommand<IngestFlags>(
      *buffer, "ingest",
      "Store search episodes and compile decisions from Kafka (offsets kept "
      "in the buffer, in the same transaction as the rows). Records deleted "
      "from Kafka before they were read are reported and counted, ingest "
      "goes on, and it exits 1",
      exit_code, [](const IngestFlags& f) {
        if (f.idle_exit_ms < 0) {
          std::cerr << "phaseloop buffer ingest: --exit-when-idle-ms must be "
                       ">= 0 (0: run until SIGINT/SIGTERM), got "
                    << f.idle_exit_ms << "\n";
          return command::kExitBadInput;
        }
        IngestOptions options = f.options;
        options.idle_exit = std::chrono::milliseconds(f.idle_exit_ms);
        return RunBufferIngest(f.buffer, options, std::cout, std::cerr);
      });
  ingest
      ->add_option("--buffer", ingest_flags->buffer,
                   "replay buffer file (created if missing)")
      ->required();
  command::AddKafkaOption(*ingest, ingest_flags->options.bootstrap_servers);
  ingest->add_option("--group", ingest_flags->options.group, "consumer group")
      ->capture_default_str();
  ingest
      ->add_option("--topic", ingest_flags->options.topic,
                   "episodes topic (\"\": read no episodes)")
      ->capture_default_str();
  ingest
      ->add_option("--decisions-topic", ingest_flags->options.decisions_topic,
                   "compile decisions topic, what `phaseloop decisions ship "
                   "--kafka` produces (\"\": read no decisions)")
      ->capture_default_str();
  command::AddRenamedOption(*ingest, "--exit-when-idle-ms", "--idle-exit-ms",
                            ingest_flags->idle_exit_ms,
                            "stop after this long without a record once the "
                            "group has settled (0: run until SIGINT/SIGTERM); "
                            "exit 1 when no broker answered in 30 s (or this "
                            "long)",
                            std::cerr);
}

}  // namespace phaseloop::replay_buffer
