#ifndef PHASELOOP_COMMON_KAFKA_KAFKA_COMMAND_H_
#define PHASELOOP_COMMON_KAFKA_KAFKA_COMMAND_H_

// `phaseloop kafka serve [--brokers N] [--partitions P] [--bootstrap-file
// FILE]`: runs the embedded Kafka cluster (librdkafka's mock brokers on
// loopback) with every phaseloop topic created, prints its bootstrap address
// on one stdout line, then writes it atomically (temp file + rename) to FILE
// (so whoever sees the file finds the line printed too), and
// serves until SIGINT or SIGTERM, then stops the brokers, removes FILE and
// exits 0. Exit codes: 0 stopped by a signal, 1 the cluster could not start,
// 2 bad flags or an unwritable FILE.

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::kafka {

void AddKafkaCommand(CLI::App& app, int& exit_code);

struct ServeFlags {
  int brokers = 1;
  int partitions = 4;  // per phaseloop topic
  std::string bootstrap_file;
};

// Blocks SIGINT and SIGTERM in the calling thread (and so in the cluster's
// threads) and returns once one arrives.
int RunServe(const ServeFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_KAFKA_COMMAND_H_
