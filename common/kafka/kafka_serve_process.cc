#include "common/kafka/kafka_serve_process.h"

namespace phaseloop::kafka {

absl::StatusOr<std::string> StartKafkaServe(
    const std::string& phaseloop, const std::string& files_prefix,
    process::BackgroundProcess* started) {
  const std::string address_file = files_prefix + ".address";
  return process::StartServer(
      {{phaseloop, "kafka", "serve", "--bootstrap-file", address_file},
       {},
       files_prefix + ".log"},
      address_file, started);
}

}  // namespace phaseloop::kafka
