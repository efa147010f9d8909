#ifndef PHASELOOP_COMMON_KAFKA_KAFKA_SERVE_PROCESS_H_
#define PHASELOOP_COMMON_KAFKA_KAFKA_SERVE_PROCESS_H_

// The embedded Kafka cluster for one controller's run (`phaseloop canary
// run`, `phaseloop loop` without --kafka): `phaseloop kafka serve` as a
// background process (common/process), its bootstrap address read from the
// file it writes.

#include <string>

#include "absl/status/statusor.h"
#include "common/process/background_process.h"

namespace phaseloop::kafka {

// `phaseloop`: the binary to run; `files_prefix`: where its address file
// and log go (PREFIX.address, PREFIX.log). Returns the bootstrap servers.
absl::StatusOr<std::string> StartKafkaServe(
    const std::string& phaseloop, const std::string& files_prefix,
    process::BackgroundProcess* started);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_KAFKA_SERVE_PROCESS_H_
