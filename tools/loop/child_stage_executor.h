#ifndef PHASELOOP_TOOLS_LOOP_CHILD_STAGE_EXECUTOR_H_
#define PHASELOOP_TOOLS_LOOP_CHILD_STAGE_EXECUTOR_H_

// The loop's stages as child processes (common/process/background_process:
// own process group, SIGTERM when the loop dies). While one runs, a
// terminal gets one live line: the stage, its time and the last line its
// log printed. A stop request (SIGINT/SIGTERM to the loop) is passed on as
// SIGTERM; the child gets `stop_grace_ms` to save its state (a canary run
// stops its instances and exits 75) before SIGKILL.

#include <atomic>
#include <ostream>

#include "tools/loop/loop_runner.h"

namespace phaseloop::loop {

class ChildStageExecutor : public StageExecutor {
 public:
  ChildStageExecutor(const std::atomic<bool>* stop, std::ostream& progress,
                     bool live_line, int64_t stop_grace_ms = 60000);

  absl::StatusOr<Result> Run(const std::vector<std::string>& argv,
                             const std::string& log_path,
                             const std::string& stdout_path,
                             const std::string& label) override;
  bool StopRequested() const override;
  void Progress(const std::string& line) override;
  int64_t NowMs() const override;

 private:
  void ClearLiveLine();

  const std::atomic<bool>* stop_;
  std::ostream& progress_;
  bool live_line_;
  int64_t stop_grace_ms_;
  bool line_shown_ = false;
};

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_CHILD_STAGE_EXECUTOR_H_
