#include "common/kafka/kafka_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/command/exit_code.h"
#include "common/command/stop_signals.h"
#include "common/command/subcommand.h"
#include "common/files/atomic_file.h"
#include "common/kafka/embedded_cluster.h"
#include "common/kafka/topics.h"

namespace phaseloop::kafka {
namespace {

// The bootstrap file, replaced durably so a reader sees the old address or
// the whole new one.
absl::Status WriteBootstrapFile(const std::string& path,
                                const std::string& content) {
  absl::Status written = files::WriteFileAtomically(path, content);
  if (!written.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write the bootstrap file: ", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace

int RunServe(const ServeFlags& flags, std::ostream& out, std::ostream& err) {
  if (flags.brokers < 1 || flags.brokers > 16) {
    err << "phaseloop kafka serve: --brokers " << flags.brokers
        << " is out of range; use 1 to 16\n";
    return command::kExitBadInput;
  }
  if (flags.partitions < 1 || flags.partitions > 1000) {
    err << "phaseloop kafka serve: --partitions " << flags.partitions
        << " is out of range; use 1 to 1000\n";
    return command::kExitBadInput;
  }
  if (!flags.bootstrap_file.empty()) {
    const size_t slash = flags.bootstrap_file.rfind('/');
    const std::string dir = slash == std::string::npos
                                ? "."
                                : flags.bootstrap_file.substr(0, slash + 1);
    if (access(dir.c_str(), W_OK) != 0) {
      err << "phaseloop kafka serve: cannot write the bootstrap file "
          << flags.bootstrap_file << ": directory " << dir << ": "
          << std::strerror(errno) << "\n";
      return command::kExitBadInput;
    }
  }
  // Block the stop signals before librdkafka starts its threads (they
  // inherit the mask), so only sigwait below ever receives them.
  command::BlockedStopSignals stop_signals;

  auto cluster = EmbeddedCluster::Start(flags.brokers);
  if (!cluster.ok()) {
    err << "phaseloop kafka serve: " << cluster.status().message() << "\n";
    return command::kExitInternal;
  }
  const int replication = std::min(flags.brokers, 3);
  for (absl::string_view topic : kAllTopics) {
    absl::Status created =
        (*cluster)->CreateTopic(topic, flags.partitions, replication);
    if (!created.ok()) {
      err << "phaseloop kafka serve: " << created.message() << "\n";
      return command::kExitInternal;
    }
  }
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  // Standard output first: a reader that waits for the file (a script, the
  // tests) then finds the address printed too.
  out << bootstrap << std::endl;
  if (!flags.bootstrap_file.empty()) {
    absl::Status written =
        WriteBootstrapFile(flags.bootstrap_file, bootstrap + "\n");
    if (!written.ok()) {
      err << "phaseloop kafka serve: " << written.message() << "\n";
      return command::kExitBadInput;
    }
  }
  err << "phaseloop kafka serve: " << flags.brokers
      << " embedded brokers (librdkafka mock cluster, in memory) at "
      << bootstrap << "; " << std::size(kAllTopics) << " phaseloop topics with "
      << flags.partitions << " partitions; SIGINT or SIGTERM stops\n";

  const int signal_number = stop_signals.Wait();
  cluster->reset();
  if (!flags.bootstrap_file.empty()) unlink(flags.bootstrap_file.c_str());
  err << "phaseloop kafka serve: stopped by signal " << signal_number << "\n";
  return command::kExitOk;
}

void AddKafkaCommand(CLI::App& app, int& exit_code) {
  CLI::App* kafka = command::AddCommandGroup(
      app, "kafka", "The embedded Kafka cluster (one-machine default)");
  auto [serve, flags] = command::AddSubcommand<ServeFlags>(
      *kafka, "serve",
      "Run librdkafka's mock Kafka cluster on loopback until SIGINT/SIGTERM; "
      "prints its bootstrap address (the --kafka value of every component). "
      "Each partition keeps only its newest 5 MiB of records (the mock's "
      "fixed retention, not configurable in librdkafka 2.0.2); consumers "
      "report older records they had not read as lost",
      exit_code,
      [](const ServeFlags& f) { return RunServe(f, std::cout, std::cerr); });
  serve->add_option("--brokers", flags->brokers, "number of brokers (1-16)")
      ->capture_default_str();
  serve
      ->add_option("--partitions", flags->partitions,
                   "partitions of each phaseloop topic created at start")
      ->capture_default_str();
  serve->add_option("--bootstrap-file", flags->bootstrap_file,
                    "also write the bootstrap address to FILE (atomically; "
                    "removed on a clean stop)");
}

}  // namespace phaseloop::kafka
