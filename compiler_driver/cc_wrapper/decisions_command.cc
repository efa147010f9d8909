#include "compiler_driver/cc_wrapper/decisions_command.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "compiler_driver/cc_wrapper/decision_stats.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/spool_shipping.h"
#include "compiler_driver/cc_wrapper/spool_space.h"
#include "compiler_driver/cc_wrapper/spool_writer.h"
#include "compiler_driver/cc_wrapper/wrapper_config.h"
#include "nlohmann/json.hpp"
#include "replay_buffer/decision_store.h"

namespace phaseloop::cc_wrapper {
namespace {

// The spool to read: --spool, else the wrapper's own. Either may not exist
// yet (a build that compiled nothing: every action cached) and is read as
// empty; a missing --spool is said on `err`, so a mistyped path is visible.
// One that exists and is not a directory is an error.
absl::StatusOr<std::string> SpoolDir(const std::string& flag,
                                     std::ostream& err) {
  if (!flag.empty()) {
    std::error_code error;
    if (std::filesystem::exists(flag, error) &&
        !std::filesystem::is_directory(flag, error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--spool ", flag,
                       ": not a directory; give the spool phaseloop-cc writes "
                       "(PHASELOOP_SPOOL, spool_dir in cc.conf, or the default "
                       "~/.cache/phaseloop/spool)"));
    }
    if (!std::filesystem::exists(flag, error)) {
      err << "note: --spool " << flag
          << ": no such directory yet, read as an empty spool (nothing "
             "compiled since it was set up; or a mistyped path?)\n";
    }
    return flag;
  }
  WrapperConfig config;
  std::string ignored;
  LoadWrapperConfig("", ProcessEnvironment(), &config, &ignored);
  if (config.spool_dir.empty()) {
    return absl::FailedPreconditionError(
        "no spool directory: HOME is unset and the per-user one under /tmp "
        "is not this user's own private directory; give --spool or set "
        "PHASELOOP_SPOOL (or HOME)");
  }
  err << FallbackSpoolNote(config.spool_dir, FallbackSpoolDir());
  return config.spool_dir;
}

// The cap the wrapper applies for this user (config file, environment).
int64_t WrapperMaxSize() {
  WrapperConfig config;
  std::string ignored;
  LoadWrapperConfig("", ProcessEnvironment(), &config, &ignored);
  return config.spool_max_size;
}

constexpr char kStatsZeroMagic[] = "phaseloop-stats-zero-v1";

struct StatsZero {
  int64_t unix_ms = 0;  // 0: never zeroed
  int64_t dropped_records = 0;
  int64_t evicted_files = 0;
  int64_t failed_records = 0;
};

// A missing or unreadable marker is no zero point (everything counts).
StatsZero ReadStatsZero(const std::string& spool) {
  StatsZero zero;
  std::ifstream in(spool + "/" + kStatsZeroFile);
  std::string magic;
  StatsZero read;
  if (in >> magic >> read.unix_ms >> read.dropped_records >>
          read.evicted_files &&
      magic == kStatsZeroMagic) {
    if (!(in >> read.failed_records)) read.failed_records = 0;  // older
    zero = read;
  }
  return zero;
}

std::string UtcTime(int64_t unix_ms) {
  if (unix_ms <= 0) return "";
  const time_t seconds = static_cast<time_t>(unix_ms / 1000);
  struct tm utc;
  if (gmtime_r(&seconds, &utc) == nullptr) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                utc.tm_min, utc.tm_sec, static_cast<int>(unix_ms % 1000));
  return buffer;
}

}  // namespace

int RunShip(const ShipFlags& flags, std::ostream& out, std::ostream& err) {
  if (!flags.buffer.empty() && !flags.kafka.empty()) {
    err << "phaseloop decisions ship: --buffer and --kafka both given; ship "
           "to one: --kafka HOST:PORT[,...] (what a CI job does: `phaseloop "
           "buffer ingest` stores them) or --buffer FILE (a buffer on this "
           "machine)\n";
    return command::kExitBadInput;
  }
  if (flags.buffer.empty() && flags.kafka.empty()) {
    err << "phaseloop decisions ship: nowhere to ship; pass --kafka "
           "HOST:PORT[,...] (or set "
        << command::kKafkaEnv
        << "; `phaseloop buffer ingest` stores what arrives) or --buffer "
           "FILE (a replay buffer on this machine)\n";
    return command::kExitBadInput;
  }
  if (const std::string bad = command::BootstrapServersError(flags.kafka);
      !bad.empty()) {
    err << "phaseloop decisions ship: --kafka " << bad << "\n";
    return command::kExitBadInput;
  }
  absl::StatusOr<std::string> spool_dir = SpoolDir(flags.spool, err);
  if (!spool_dir.ok()) {
    err << "phaseloop decisions ship: " << spool_dir.status().message() << "\n";
    return command::kExitBadInput;
  }
  const std::string spool = *spool_dir;
  DecisionBatchSender send;
  std::string destination;
  std::unique_ptr<replay_buffer::DecisionStore> store;
  if (!flags.buffer.empty()) {
    auto opened = replay_buffer::DecisionStore::Open(flags.buffer);
    if (!opened.ok()) {
      err << "phaseloop decisions ship: " << opened.status().message() << "\n";
      return command::kExitBadInput;
    }
    store = *std::move(opened);
    // All files in one transaction; when it fails, file by file, so one
    // file's bad record (no decision_id) does not hold back every other
    // file at every run: that file stays, named with its reason.
    send = [&store](const std::vector<const v1::DecisionBatch*>& batches) {
      std::vector<v1::Decision> decisions;
      for (const v1::DecisionBatch* batch : batches) {
        for (const v1::Decision& d : batch->decisions()) decisions.push_back(d);
      }
      absl::Status together = store->Upsert(decisions);
      if (together.ok() || batches.size() == 1) {
        return std::vector<absl::Status>(batches.size(), together);
      }
      std::vector<absl::Status> each;
      for (const v1::DecisionBatch* batch : batches) {
        each.push_back(store->Upsert(std::vector<v1::Decision>(
            batch->decisions().begin(), batch->decisions().end())));
      }
      return each;
    };
    destination = flags.buffer;
  } else {
    if (!flags.kafka_sender) {
      err << "phaseloop decisions ship: this program was built without a "
             "Kafka sender; use the phaseloop binary, or --buffer FILE\n";
      return command::kExitInternal;
    }
    send = [&flags](const std::vector<const v1::DecisionBatch*>& batches) {
      return flags.kafka_sender(flags.kafka, batches);
    };
    destination = "phaseloop.decisions on Kafka " + flags.kafka;
  }
  absl::StatusOr<SpoolShipment> shipment = ShipSpool(spool, send);
  if (!shipment.ok()) {
    err << "phaseloop decisions ship: " << shipment.status().message() << "\n";
    return command::kExitBadInput;
  }
  const size_t files = shipment->shipped.size() + shipment->kept.size();
  out << "shipped " << shipment->decisions << " decisions from "
      << shipment->shipped.size() << " spool files in " << spool << " to "
      << destination << "\n";
  // Unreadable files hold records that were not delivered: a CI step must
  // not pass on them (it did, with a warning).
  if (!shipment->corrupt.empty()) {
    err << "phaseloop decisions ship: " << shipment->corrupt.size()
        << " spool files in " << spool
        << " are unreadable (not a DecisionBatch: damaged on disk?), so "
           "their records were not shipped; they stay in the spool:\n";
    for (const std::string& path : shipment->corrupt) {
      err << "  " << path << "\n";
    }
    err << "Inspect one with `phaseloop decisions show FILE`, then move it "
           "out of the spool (or delete it); shipping again leaves it as "
           "it is.\n";
  }
  if (shipment->kept.empty()) {
    return shipment->corrupt.empty() ? command::kExitOk
                                     : command::kExitInternal;
  }
  if (!flags.buffer.empty()) {
    err << "phaseloop decisions ship: " << shipment->kept.size() << " of "
        << files << " spool files were not stored in " << flags.buffer
        << "; they stay unshipped in " << spool << ":\n";
    for (const auto& [path, status] : shipment->kept) {
      err << "  " << path << ": " << status.message() << "\n";
    }
    err << "Look at a file with `phaseloop decisions show FILE`; move a "
           "damaged one out of the spool, then ship again.\n";
    return command::kExitInternal;
  }
  err << "phaseloop decisions ship: " << shipment->kept.size() << " of "
      << files << " spool files were not delivered to " << destination << ": "
      << shipment->kept.front().second.message() << "\nThey stay unshipped in "
      << spool << ":\n";
  for (const auto& [path, status] : shipment->kept) err << "  " << path << "\n";
  err << "Check that Kafka answers at " << flags.kafka
      << " (a real cluster, or what `phaseloop kafka serve` prints), then run "
         "`phaseloop decisions ship --spool "
      << spool << " --kafka " << flags.kafka
      << "` again: records that did arrive are stored once (keyed by "
         "decision_id).\n";
  return command::kExitInternal;
}

namespace {

// A record as a block of `name  value` lines; empty fields left out.
void PrintBlock(const SpoolFile& file, const v1::Decision& d,
                std::ostream& out) {
  auto line = [&](const char* name, const std::string& value) {
    if (!value.empty()) {
      out << "  " << std::left << std::setw(15) << name << value << "\n";
    }
  };
  out << "decision " << d.decision_id() << "  (" << file.path << ", "
      << (file.shipped ? "shipped" : "not shipped yet") << ")\n";
  line("outcome", OutcomeName(d.outcome()) +
                      (d.reason().empty() ? "" : " (" + d.reason() + ")"));
  line("detail", d.detail());
  line("source",
       d.source() + (d.object_path().empty() ? "" : " -> " + d.object_path()));
  line("opt_level", d.opt_level().empty() ? "" : "-" + d.opt_level());
  line("pipeline", d.pipeline());
  line("lto", d.lto().empty()
                  ? ""
                  : d.lto() + " (LTO bitcode; the pre-link pipeline ran)");
  line("object_cache", d.object_cache());
  line("outcome_cache", d.outcome_cache());
  line("policy_version", d.policy_version());
  line("module_hash", d.module_hash());
  line("build_id", d.build_id());
  line("host", d.host());
  line("time", UtcTime(d.unix_time_ms()));
  if (d.has_alloc_size() || d.text_size() > 0) {
    std::string sizes = absl::StrCat(".text ", d.text_size(), " B");
    if (d.has_alloc_size()) {
      absl::StrAppend(&sizes, ", allocated ", d.alloc_size(), " B");
    }
    if (d.has_oz_alloc_size()) {
      absl::StrAppend(&sizes, "; -Oz allocated ", d.oz_alloc_size(),
                      " B, saved ", d.oz_alloc_size() - d.alloc_size(), " B");
    } else if (d.outcome() == v1::OPTIMIZED) {
      absl::StrAppend(&sizes, "; -Oz not measured");
    }
    line("sizes", sizes);
  }
  for (const v1::MeasuredPipeline& m : d.topk_measured()) {
    line("topk measured", absl::StrCat(m.value(), "  ", m.pipeline()));
  }
  if (d.ir_count_before() > 0 || d.ir_count_after() > 0) {
    line("ir_count",
         absl::StrCat(d.ir_count_before(), " -> ", d.ir_count_after()));
  }
  if (d.compile_time_us() > 0 || d.optimize_time_us() > 0) {
    line("time_us",
         absl::StrCat("wrapper ", d.compile_time_us(), ", optimiser ",
                      d.optimize_time_us(), ", policy ", d.policy_time_us()));
  }
  if (d.autophase_size() > 0) {
    line("autophase",
         absl::StrCat(d.autophase_size(), " features (--json lists them)"));
  }
  if (d.inst_count_size() > 0) {
    line("inst_count",
         absl::StrCat(d.inst_count_size(), " features (--json lists them)"));
  }
}

// Every set field by its proto name: numbers as numbers, the outcome by
// OutcomeName, other enums by name, messages as objects.
nlohmann::ordered_json MessageJson(const google::protobuf::Message& m);

// One value of field `f` (element `index` of a repeated one, else -1), of
// any type: every field set is shown (repeated messages such as
// topk_measured came out as []).
nlohmann::ordered_json FieldJson(const google::protobuf::Message& m,
                                 const google::protobuf::FieldDescriptor* f,
                                 int index) {
  using FD = google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FD::CPPTYPE_INT64:
      return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
    case FD::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FD::CPPTYPE_UINT64:
      return rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
    case FD::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FD::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FD::CPPTYPE_BOOL:
      return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case FD::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* value =
          rep ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f);
      if (f->enum_type() == v1::DecisionOutcome_descriptor()) {
        return OutcomeName(static_cast<v1::DecisionOutcome>(value->number()));
      }
      return value->name();
    }
    case FD::CPPTYPE_STRING:
      return rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
    case FD::CPPTYPE_MESSAGE:
      return MessageJson(rep ? r->GetRepeatedMessage(m, f, index)
                             : r->GetMessage(m, f));
  }
  return nullptr;
}

nlohmann::ordered_json MessageJson(const google::protobuf::Message& m) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const google::protobuf::Reflection* reflection = m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(m, &fields);
  for (const google::protobuf::FieldDescriptor* f : fields) {
    if (f->is_repeated()) {
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      for (int i = 0; i < reflection->FieldSize(m, f); ++i) {
        values.push_back(FieldJson(m, f, i));
      }
      j[f->name()] = values;
    } else {
      j[f->name()] = FieldJson(m, f, -1);
    }
  }
  return j;
}

// A record's fields, then where the record is.
nlohmann::ordered_json DecisionJson(const SpoolFile& file,
                                    const v1::Decision& d) {
  nlohmann::ordered_json j = MessageJson(d);
  j["spool_file"] = file.path;
  j["shipped"] = file.shipped;
  return j;
}

}  // namespace

int RunShow(const ShowFlags& flags, std::ostream& out, std::ostream& err) {
  std::vector<SpoolFile> files;
  // Files named on the command line: the readable ones are shown and each
  // unreadable one named, exit 2 (one bad file hid every good one).
  bool unreadable = false;
  if (!flags.files.empty()) {
    for (const std::string& path : flags.files) {
      absl::StatusOr<SpoolFile> file = ReadSpoolFile(path);
      if (!file.ok()) {
        err << "phaseloop decisions show: " << file.status().message() << "\n";
        unreadable = true;
        continue;
      }
      files.push_back(*std::move(file));
    }
  } else {
    absl::StatusOr<std::string> spool_dir = SpoolDir(flags.spool, err);
    if (!spool_dir.ok()) {
      err << "phaseloop decisions show: " << spool_dir.status().message()
          << "\n";
      return command::kExitBadInput;
    }
    const std::string spool = *spool_dir;
    absl::StatusOr<SpoolContents> contents =
        ReadSpool(spool, /*with_shipped=*/true);
    if (!contents.ok()) {
      err << "phaseloop decisions show: " << contents.status().message()
          << "\n";
      return command::kExitBadInput;
    }
    files = std::move(contents->files);
    for (const std::string& path : contents->corrupt) {
      err << "warning: skipped unreadable spool file " << path << "\n";
    }
    if (files.empty() && !flags.json) {
      out << "no decision records in " << spool << "\n";
    }
  }
  const char* sep = "";
  for (const SpoolFile& file : files) {
    for (const v1::Decision& d : file.batch.decisions()) {
      if (flags.json) {
        out << DecisionJson(file, d).dump(
                   -1, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n";
      } else {
        out << sep;
        PrintBlock(file, d, out);
        sep = "\n";
      }
    }
  }
  return unreadable ? command::kExitBadInput : command::kExitOk;
}

int RunStats(const StatsFlags& flags, std::ostream& out, std::ostream& err) {
  std::ostringstream quiet;  // --zero makes the spool when missing
  absl::StatusOr<std::string> spool_dir = SpoolDir(
      flags.spool, flags.zero ? static_cast<std::ostream&>(quiet) : err);
  if (!spool_dir.ok()) {
    err << "phaseloop stats: " << spool_dir.status().message() << "\n";
    return command::kExitBadInput;
  }
  const std::string spool = *spool_dir;
  SpoolCounters counters;
  const bool have_counters = ReadSpoolCounters(spool, &counters);
  const StatsZero zero = ReadStatsZero(spool);
  if (flags.zero) {
    std::error_code ignored;
    const bool made = std::filesystem::create_directories(spool, ignored);
    if (made && !flags.spool.empty()) {
      err << "note: --spool " << spool
          << ": no such directory yet; made it for the zero point (the "
             "wrapper writes there once PHASELOOP_SPOOL or cc.conf names it; "
             "a mistyped path? remove it)\n";
    }
    const std::string line = absl::StrCat(
        kStatsZeroMagic, " ", UnixTimeMs(), " ", counters.dropped_records, " ",
        counters.evicted_files, " ", counters.failed_records, "\n");
    absl::Status written =
        files::WriteFileAtomically(spool + "/" + kStatsZeroFile, line);
    if (!written.ok()) {
      err << "phaseloop stats --zero: " << written.message() << "\n";
      return command::kExitBadInput;
    }
    if (flags.json) {
      out << nlohmann::json{{"zeroed", true},
                            {"spool", spool},
                            {"zero_point", spool + "/" + kStatsZeroFile}}
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
      return command::kExitOk;
    }
    out << "statistics zeroed (" << spool << "/" << kStatsZeroFile
        << "); no decision record was deleted, unshipped ones stay for "
           "phaseloop decisions ship\n";
    return command::kExitOk;
  }
  absl::StatusOr<SpoolContents> contents =
      ReadSpool(spool, /*with_shipped=*/flags.buffer.empty());
  if (!contents.ok()) {
    err << "phaseloop stats: " << contents.status().message() << "\n";
    return command::kExitBadInput;
  }
  DecisionStats stats;
  AddSpool(*contents, zero.unix_ms, &stats);
  if (have_counters) {
    stats.space = counters;
    stats.dropped_records =
        std::max<int64_t>(0, counters.dropped_records - zero.dropped_records);
    stats.evicted_files =
        std::max<int64_t>(0, counters.evicted_files - zero.evicted_files);
    stats.failed_records =
        std::max<int64_t>(0, counters.failed_records - zero.failed_records);
  }
  stats.zeroed_at_ms = zero.unix_ms;
  stats.max_size = WrapperMaxSize();
  if (!flags.buffer.empty()) {
    // Read only: a mistyped --buffer is an error, not a new empty buffer.
    replay_buffer::OpenOptions reader;
    reader.create = false;
    reader.read_only = true;
    auto store = replay_buffer::DecisionStore::Open(flags.buffer, reader);
    if (!store.ok()) {
      err << "phaseloop stats: --buffer: " << store.status().message() << "\n";
      return command::kExitBadInput;
    }
    auto counts = (*store)->CountByOutcomeAndReason();
    if (!counts.ok()) {
      err << "phaseloop stats: cannot read the decisions of " << flags.buffer
          << ": " << counts.status().message() << "\n";
      return command::kExitInternal;
    }
    stats.buffer = flags.buffer;
    AddBufferCounts(*counts, &stats);
  }
  if (flags.json) {
    PrintStatsJson(stats, spool, out);
  } else {
    PrintStatsTable(stats, spool, out);
  }
  // A cap the wrapper cannot read makes it step aside (config_invalid):
  // said here too, as `cache stats` says it of the outcome cache's.
  if (const char* cap = std::getenv("PHASELOOP_SPOOL_MAX_SIZE");
      cap != nullptr && *cap != '\0') {
    int64_t ignored = 0;
    if (!ParseSize(cap, &ignored)) {
      err << "warning: PHASELOOP_SPOOL_MAX_SIZE='" << cap
          << "' is not a size (e.g. 64Mi, 500M, 1048576; 0 = no cap): the "
             "wrapper leaves every compile to plain clang under it "
             "(config_invalid); the cap shown is the default, "
          << stats.max_size << " bytes\n";
    }
  }
  return command::kExitOk;
}

void AddDecisionsCommand(CLI::App& app, int& exit_code,
                         KafkaDecisionSender kafka_sender) {
  CLI::App* decisions = command::AddCommandGroup(
      app, "decisions", "Decision records written by phaseloop-cc");
  auto [ship, flags] = command::AddSubcommand<ShipFlags>(
      *decisions, "ship",
      "Ship spooled decision records to Kafka (phaseloop.decisions, for "
      "`phaseloop buffer ingest`) or into a replay buffer; files are marked "
      "shipped only once every record of them arrived",
      exit_code, [](const ShipFlags& f) {
        ShipFlags resolved = f;
        // $PHASELOOP_KAFKA is the default destination, not a second one:
        // an explicit --buffer wins over it.
        if (resolved.kafka.empty() && resolved.buffer.empty()) {
          if (const char* env = std::getenv(command::kKafkaEnv)) {
            resolved.kafka = env;
          }
        }
        return RunShip(resolved, std::cout, std::cerr);
      });
  flags->kafka_sender = std::move(kafka_sender);
  ship->add_option("--kafka", flags->kafka,
                   "Kafka bootstrap servers, host:port[,host:port...] (a "
                   "real cluster, or what `phaseloop kafka serve` prints); "
                   "default $PHASELOOP_KAFKA unless --buffer is given");
  ship->add_option("--buffer", flags->buffer,
                   "SQLite replay buffer file (created if missing), instead "
                   "of Kafka");
  ship->add_option("--spool", flags->spool,
                   "spool directory (default: the wrapper's, "
                   "$PHASELOOP_SPOOL or ~/.cache/phaseloop/spool)");
  auto [show, show_flags] = command::AddSubcommand<ShowFlags>(
      *decisions, "show",
      "Print decision records: spool files given, else the whole spool",
      exit_code,
      [](const ShowFlags& f) { return RunShow(f, std::cout, std::cerr); });
  show->add_option("file", show_flags->files,
                   "spool files (*.decisions, *.shipped)");
  show->add_option("--spool", show_flags->spool,
                   "spool directory (default: the wrapper's)");
  show->add_flag("--json", show_flags->json, "one JSON object per record");
}

void AddStatsCommand(CLI::App& app, int& exit_code) {
  auto [stats, flags] = command::AddSubcommand<StatsFlags>(
      app, "stats",
      "What phaseloop-cc did: counts by outcome and reason, bytes saved, time",
      exit_code,
      [](const StatsFlags& f) { return RunStats(f, std::cout, std::cerr); });
  stats->add_option("--spool", flags->spool,
                    "spool directory (default: the wrapper's)");
  stats->add_option("--buffer", flags->buffer,
                    "count the unshipped spool and all of this buffer "
                    "(not zeroed) instead of the whole spool");
  stats->add_flag("--json", flags->json, "print JSON");
  stats->add_flag("--zero", flags->zero,
                  "zero the statistics (no record is deleted)");
}

}  // namespace phaseloop::cc_wrapper
