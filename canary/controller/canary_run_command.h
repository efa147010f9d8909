#ifndef PHASELOOP_CANARY_CONTROLLER_CANARY_RUN_COMMAND_H_
#define PHASELOOP_CANARY_CONTROLLER_CANARY_RUN_COMMAND_H_

// `phaseloop canary run --service configs/services/NAME.yaml --candidate
// POLICY.plpolicy|VERSION`: one rollout, end to end, on embedded defaults
// (a Kafka cluster and a policy store it starts itself) or real ones
// (--kafka, --policy-store). Run the same command again after Ctrl-C or a
// crash and it resumes; after the end it prints the result again.
//
// Exit codes: 0 promoted; 1 internal; 2 bad input; 3 rolled back (the
// candidate failed, or its outputs differ from stable's); 4 refused (the
// error budget allows no exploration now); 5 aborted (no judgement could
// be made, e.g. no reward windows: nothing promoted, nothing blamed);
// 75 stopped by a signal, resumable.

#include <iosfwd>
#include <optional>
#include <string>

#include "common/command/exit_code.h"

namespace CLI {
class App;
}

namespace phaseloop::canary {

inline constexpr int kExitRolledBack = 3;
inline constexpr int kExitRefused = 4;
inline constexpr int kExitAborted = 5;
inline constexpr int kExitResumable = command::kExitStopped;

struct CanaryRunFlags {
  std::string service;
  std::string candidate;
  std::string canary_id;
  std::string stable;
  std::string policy_store;  // address; "" = PHASELOOP_POLICY_STORE or dir
  std::string policy_dir;    // "" = STATE/policies
  std::string kafka;         // "" = PHASELOOP_KAFKA or embedded
  std::string buffer;        // "" = STATE/buffer.db
  std::string state_dir;
  std::string cc;
  std::string bazel_shims;
  std::optional<double> staging_lower_bound;
  double inject_canary_slowdown = 0;           // benchmarks only
  std::string metrics_listen = "127.0.0.1:0";  // "" = no /metrics
  bool json = false;
};

int RunCanaryRun(const CanaryRunFlags& flags, std::ostream& out,
                 std::ostream& err);

void AddCanaryRunCommand(CLI::App& canary, int& exit_code);

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_CONTROLLER_CANARY_RUN_COMMAND_H_
