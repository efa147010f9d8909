#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_REWARDS_COMMAND_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_REWARDS_COMMAND_H_

// `phaseloop rewards run --kafka BOOTSTRAP --buffer B.db [--slo-dir DIR]
//   [--window-ms N] [--lateness-ms N] [--idle-ms N] [--group-id G]
//   [--metrics-port P] [--exit-when-idle-ms N] [--json]`
// runs the reward engine (reward_engine.h) as a member of consumer group G
// until SIGINT/SIGTERM (graceful: the producer is flushed and the last
// checkpoint stored) or N ms without input. Progress goes to stderr; the
// summary to stdout (a table, or one JSON object with --json). With
// --metrics-port, /metrics is served on 127.0.0.1 (port 0: any; the port
// is printed on stderr). Exit codes: 0 stopped, 1 Kafka or the buffer
// failed, 2 bad flags, SLOs or buffer path.

#include <iosfwd>
#include <string>

#include "CLI/CLI.hpp"

namespace phaseloop::reward_engine {

struct RewardsRunFlags {
  std::string kafka;
  std::string buffer;
  std::string slo_dir = "configs/slo";
  int64_t window_ms = 60000;
  int64_t lateness_ms = 5000;
  int64_t idle_ms = 30000;
  std::string group_id = "phaseloop-rewards";
  int metrics_port = -1;  // -1: no /metrics
  std::string metrics_host = "127.0.0.1";
  int64_t exit_when_idle_ms = 0;
  bool json = false;
  int64_t close_idle_ms = 2000;  // 0: windows close only on the watermark
  // Consumer-group session timeout: how long a killed engine's partitions
  // stay with it before a restarted or surviving engine gets them. 6000 is
  // the smallest a Kafka broker accepts by default
  // (group.min.session.timeout.ms); librdkafka's own default is 45000.
  int64_t session_timeout_ms = 6000;
  bool quick_group = false;  // 4000 ms sessions, for the embedded cluster
};

void AddRewardsCommand(CLI::App& app, int& exit_code);

int RunRewards(const RewardsRunFlags& flags, std::ostream& out,
               std::ostream& err);

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_REWARDS_COMMAND_H_
