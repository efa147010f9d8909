#include "tools/loop/child_stage_executor.h"

#include <chrono>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/process/background_process.h"
#include "tools/loop/loop_stages.h"

namespace phaseloop::loop {
namespace {

constexpr int kLineWidth = 100;

}  // namespace

ChildStageExecutor::ChildStageExecutor(const std::atomic<bool>* stop,
                                       std::ostream& progress, bool live_line,
                                       int64_t stop_grace_ms)
    : stop_(stop),
      progress_(progress),
      live_line_(live_line),
      stop_grace_ms_(stop_grace_ms) {}

bool ChildStageExecutor::StopRequested() const {
  return stop_ != nullptr && stop_->load();
}

int64_t ChildStageExecutor::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void ChildStageExecutor::ClearLiveLine() {
  if (!line_shown_) return;
  progress_ << "\r" << std::string(kLineWidth, ' ') << "\r";
  line_shown_ = false;
}

void ChildStageExecutor::Progress(const std::string& line) {
  ClearLiveLine();
  progress_ << line;
  if (line.empty() || line.back() != '\n') progress_ << "\n";
  progress_.flush();
}

absl::StatusOr<StageExecutor::Result> ChildStageExecutor::Run(
    const std::vector<std::string>& argv, const std::string& log_path,
    const std::string& stdout_path, const std::string& label) {
  {
    std::ofstream log(log_path, std::ios::app);
    log << "\n$";
    for (const std::string& arg : argv) log << " " << arg;
    log << "\n";
  }
  auto child = process::StartBackground({argv, {}, log_path, stdout_path});
  if (!child.ok()) return child.status();
  const auto start = std::chrono::steady_clock::now();
  auto next_line = start;
  while (true) {
    if (std::optional<int> status = process::ExitStatusIfEnded(*child)) {
      ClearLiveLine();
      return Result{*status, false};
    }
    if (StopRequested()) {
      ClearLiveLine();
      progress_ << label << ": stopping (its state is kept)\n";
      progress_.flush();
      (void)process::StopBackground(*child, stop_grace_ms_);
      return Result{0, true};
    }
    const auto now = std::chrono::steady_clock::now();
    if (live_line_ && now >= next_line) {
      const int64_t s =
          std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
      std::string line = absl::StrFormat("%s %dm%02ds  %s", label, s / 60,
                                         s % 60, LastLogLine(log_path));
      if (line.size() > kLineWidth - 1) line.resize(kLineWidth - 1);
      progress_ << "\r" << line
                << std::string(kLineWidth - 1 - line.size(), ' ') << std::flush;
      line_shown_ = true;
      next_line = now + std::chrono::seconds(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace phaseloop::loop
