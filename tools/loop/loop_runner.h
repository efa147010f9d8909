#ifndef PHASELOOP_TOOLS_LOOP_LOOP_RUNNER_H_
#define PHASELOOP_TOOLS_LOOP_LOOP_RUNNER_H_

// The closed loop as a durable state machine over v1::LoopRun
// (proto/phaseloop/v1/loop.proto). Every iteration runs these stages, each
// a `phaseloop` command in a child process (tools/loop/loop_stages.h):
//
//   explore  runtime search of the service's workload into the iteration's
//            own buffer file, merged into the replay buffer when it ends;
//   train    the speed learner on the whole buffer (runtime searches,
//            staging and canary rewards), its publish gate on held-out
//            workloads; a refused policy ends the iteration here;
//   publish  the policy into the store's candidate channel (a policy that
//            is stable already ends the iteration here);
//   stage    the candidate on the service's workload: outputs first (a
//            miscompile is recorded, blocked and never rolled out), then
//            runtime vs -O3, merged into the buffer;
//   canary   `phaseloop canary run` of the candidate against stable; its
//            final reward lands in the buffer the next train reads.
//
// The state is saved before a stage starts and after it ends; a restarted
// loop re-runs only a stage that had started without ending (its buffer
// file is made afresh, a canary resumes under the same id), so nothing is
// counted twice. Stop requests end the running stage's child gracefully and
// leave the loop resumable.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "phaseloop/v1/loop.pb.h"
#include "tools/loop/loop_config.h"
#include "tools/loop/loop_state.h"

namespace phaseloop::loop {

// Where the loop runs and what it talks to.
struct LoopSetup {
  std::string loop_id;
  std::string state_dir;
  std::string buffer;        // the replay buffer (SQLite file)
  std::string phaseloop;     // the binary the stages run
  std::string cc;            // phaseloop-cc
  std::string kafka;         // bootstrap servers
  std::string policy_store;  // HOST:PORT
  std::string policy_dir;    // recorded in the state; "" for a remote store
  int iterations = 3;
};

// Runs one stage's command: the live one runs a child process.
class StageExecutor {
 public:
  struct Result {
    int exit_code = 0;
    bool stopped = false;  // a stop request ended it
  };
  virtual ~StageExecutor() = default;
  // argv's stdout to `stdout_path`, its stderr to `log_path`; `label` names
  // it in progress lines.
  virtual absl::StatusOr<Result> Run(const std::vector<std::string>& argv,
                                     const std::string& log_path,
                                     const std::string& stdout_path,
                                     const std::string& label) = 0;
  virtual bool StopRequested() const = 0;
  virtual void Progress(const std::string& line) = 0;
  virtual int64_t NowMs() const = 0;
};

class LoopRunner {
 public:
  LoopRunner(LoopConfig config, LoopSetup setup, StageExecutor* executor);

  // Creates the loop or resumes it. Returns its state when every planned
  // iteration has ended (phase "done"), when a stop request interrupted it
  // (phase still "running": run again to resume), or when a stage failed
  // (phase "failed", `failure` naming the stage and its log).
  absl::StatusOr<v1::LoopRun> Run();

 private:
  absl::Status RunIteration(v1::LoopRun& run, int index);
  absl::Status Save(const v1::LoopRun& run) const;

  LoopConfig config_;
  LoopSetup setup_;
  StageExecutor* executor_;
  LoopStateStore store_;
};

// The per-iteration summary table (what the loop prints after each one and
// `phaseloop loop --json` leaves out).
std::string FormatIterations(const v1::LoopRun& run);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_LOOP_RUNNER_H_
