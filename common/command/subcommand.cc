#include "common/command/subcommand.h"

namespace phaseloop::command {

CLI::App* AddCommandGroup(CLI::App& parent, const std::string& name,
                          const std::string& description) {
  CLI::App* group = parent.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

CLI::Option* AddKafkaOption(CLI::App& command, std::string& bootstrap) {
  return command
      .add_option("--kafka", bootstrap,
                  "Kafka bootstrap servers, host:port[,host:port...] (a real "
                  "cluster, or what `phaseloop kafka serve` prints)")
      ->envname(kKafkaEnv);
}

}  // namespace phaseloop::command
