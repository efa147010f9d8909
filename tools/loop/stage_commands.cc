#include "tools/loop/stage_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files/atomic_file.h"

namespace phaseloop::loop {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string Number(double value) { return absl::StrFormat("%g", value); }

std::string LogPath(const StageContext& ctx, const std::string& stage) {
  return absl::StrCat(ctx.iteration_dir, "/", stage, ".log");
}

std::string OutPath(const StageContext& ctx, const std::string& what) {
  return absl::StrCat(ctx.iteration_dir, "/", what, ".json");
}

absl::StatusOr<StageExecutor::Result> RunCommand(
    const StageContext& ctx, StageExecutor& executor, const std::string& stage,
    const std::string& what, const std::vector<std::string>& argv) {
  return executor.Run(argv, LogPath(ctx, stage), OutPath(ctx, what),
                      absl::StrCat("iteration ", ctx.index + 1, " ", stage));
}

absl::StatusOr<json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat(
        path, " is not the JSON the stage's command prints: ", e.what()));
  }
}

StageOutcome Failed(const StageContext& ctx, const std::string& stage,
                    const std::string& what, int exit_code) {
  return {StageOutcome::kFailed, absl::StrCat(what, " exited ", exit_code,
                                              "; see ", LogPath(ctx, stage))};
}

absl::StatusOr<StageOutcome> MergeBuffer(const StageContext& ctx,
                                         StageExecutor& executor,
                                         const std::string& stage,
                                         const std::string& file) {
  auto merged = RunCommand(ctx, executor, stage, stage + "-import",
                           {ctx.setup->phaseloop, "buffer", "import",
                            "--buffer", ctx.setup->buffer, "--in", file});
  if (!merged.ok()) return merged.status();
  if (merged->stopped) return StageOutcome{StageOutcome::kStopped, ""};
  if (merged->exit_code != kExitOk) {
    return Failed(ctx, stage, "phaseloop buffer import", merged->exit_code);
  }
  return StageOutcome{StageOutcome::kDone, ""};
}

void RemoveFile(const std::string& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
  fs::remove(path + "-wal", ignored);
  fs::remove(path + "-shm", ignored);
}

std::string FinishedPath(const StageContext& ctx, const std::string& stage) {
  return absl::StrCat(ctx.iteration_dir, "/", stage, ".finished");
}

std::optional<int> FinishedExitCode(const StageContext& ctx,
                                    const std::string& stage,
                                    const std::string& db) {
  std::string text;
  int code = 0;
  if (!fs::exists(db) ||
      !files::ReadWholeFile(FinishedPath(ctx, stage), &text).ok() ||
      !absl::SimpleAtoi(text, &code)) {
    return std::nullopt;
  }
  return code;
}

}  // namespace phaseloop::loop
