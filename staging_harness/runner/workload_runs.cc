#include "staging_harness/runner/workload_runs.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace phaseloop::runner {
namespace fs = std::filesystem;
namespace {

constexpr char kStdoutFile[] = ".phaseloop-stdout";

absl::Status Failed(const std::string& what, const std::error_code& error) {
  return absl::InternalError(absl::StrCat(what, ": ", error.message()));
}

}  // namespace

absl::Status PrepareRunDirectory(const workloads::Workload& workload,
                                 const BuiltVariant& built,
                                 const PreparedInputs& inputs,
                                 const std::string& run_dir) {
  std::error_code error;
  fs::remove_all(run_dir, error);
  fs::create_directories(run_dir, error);
  if (error) return Failed("cannot create " + run_dir, error);
  for (const std::string& artifact : workload.build.artifacts) {
    const fs::path to = fs::path(run_dir) / artifact;
    fs::create_directories(to.parent_path(), error);
    fs::copy_file(fs::path(built.artifacts_dir) / artifact, to, error);
    if (error) return Failed("cannot copy artifact " + artifact, error);
  }
  for (const std::string& input : inputs.files) {
    const fs::path from = fs::path(inputs.dir) / input;
    const fs::path to = fs::path(run_dir) / input;
    fs::create_directories(to.parent_path(), error);
    fs::create_hard_link(from, to, error);
    if (error) {  // another file system: copy
      error.clear();
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
    }
    if (error) return Failed("cannot place input " + input, error);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CommandRun>> RunPass(
    const workloads::Workload& workload, const std::string& run_dir,
    const PassOptions& options) {
  std::vector<CommandRun> pass;
  std::error_code error;
  for (size_t i = 0; i < workload.runs.size(); ++i) {
    const workloads::RunCommand& command = workload.runs[i];
    // An output file left by an earlier pass must not pass for this one's.
    for (const std::string& file : command.check.files) {
      fs::remove(fs::path(run_dir) / file, error);
    }
    process::MeasuredCommand measured;
    measured.argv = {"sh", "-c", command.command};
    measured.cwd = run_dir;
    measured.stdout_path = (fs::path(run_dir) / kStdoutFile).string();
    measured.timeout_s = command.timeout_s * options.timeout_scale;
    measured.cpu = options.cpu;
    measured.count_hardware = options.count_hardware;
    if (!options.executed_out_dir.empty()) {
      fs::create_directories(options.executed_out_dir, error);
      if (error)
        return Failed("cannot create " + options.executed_out_dir, error);
      const std::string counts = ExecutedOutPath(options.executed_out_dir, i);
      fs::remove(counts, error);
      measured.env = {"PHASELOOP_EXECUTED_OUT=" + counts};
    }
    if (!options.profile_out_dir.empty()) {
      fs::create_directories(options.profile_out_dir, error);
      if (error)
        return Failed("cannot create " + options.profile_out_dir, error);
      measured.env.push_back(
          absl::StrCat("LLVM_PROFILE_FILE=", options.profile_out_dir, "/", i,
                       "-%p.profraw"));
    }
    fs::path keep;
    if (!options.keep_outputs_dir.empty()) {
      // Kept with the outputs: a run that fails says why only there.
      keep = fs::path(options.keep_outputs_dir) / std::to_string(i);
      fs::create_directories(keep, error);
      if (error) return Failed("cannot create " + keep.string(), error);
      measured.stderr_path = (keep / "stderr").string();
    }
    absl::StatusOr<process::Measurement> measurement =
        process::RunMeasured(measured);
    if (!measurement.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(workload.path, ": ", command.name, ": ",
                       measurement.status().message()));
    }
    CommandRun run;
    run.name = command.name;
    run.measurement = *measurement;
    run.outputs.exit_status = measurement->exit_status;
    run.outputs.term_signal = measurement->term_signal;
    run.outputs.timed_out = measurement->timed_out;
    run.outputs.stdout_path = measured.stdout_path;
    if (!keep.empty()) {
      run.outputs.stdout_path = (keep / "stdout").string();
      fs::rename(measured.stdout_path, run.outputs.stdout_path, error);
      if (error) return Failed("cannot keep the stdout of " + run.name, error);
    }
    for (const std::string& file : command.check.files) {
      fs::path path = fs::path(run_dir) / file;
      if (!fs::exists(path)) {
        run.outputs.files[file] = "";
        continue;
      }
      if (!keep.empty()) {
        // Copied, not moved: a later command of the pass may read it.
        const fs::path kept = keep / "files" / file;
        fs::create_directories(kept.parent_path(), error);
        if (!error) {
          fs::copy_file(path, kept, fs::copy_options::overwrite_existing,
                        error);
        }
        if (error) return Failed("cannot keep " + file, error);
        path = kept;
      }
      run.outputs.files[file] = path.string();
    }
    pass.push_back(std::move(run));
  }
  return pass;
}

std::string ExecutedOutPath(const std::string& executed_out_dir, size_t index) {
  return (fs::path(executed_out_dir) / std::to_string(index)).string();
}

PassTotals Totals(const std::vector<CommandRun>& pass) {
  PassTotals totals;
  totals.hardware_counted = !pass.empty();
  totals.pinned = !pass.empty();
  for (const CommandRun& run : pass) {
    const process::Measurement& m = run.measurement;
    totals.wall_s += m.wall_s;
    totals.cpu_s += m.user_s + m.sys_s;
    totals.hardware_counted = totals.hardware_counted && m.hardware_counted;
    totals.instructions += m.instructions;
    totals.cycles += m.cycles;
    totals.pinned = totals.pinned && m.pinned;
  }
  return totals;
}

}  // namespace phaseloop::runner
