#include "staging_harness/profiling/profile_collection.h"

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/process/subprocess.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/workloads/workload_source.h"

namespace phaseloop::profiling {
namespace fs = std::filesystem;
namespace {

// Instrumented code runs slower than the build the run limits were set for.
constexpr double kInstrumentedTimeoutFactor = 4;
constexpr char kInstallHint[] =
    "; llvm-profdata-16 comes with Debian's llvm-16 package (tools/setup.sh "
    "installs it), or give --llvm-profdata";

absl::StatusOr<process::ProcessResult> RunTool(
    const std::vector<std::string>& argv, const std::string& what) {
  process::ProcessSpec spec;
  spec.argv = argv;
  spec.timeout_seconds = 600;
  absl::StatusOr<process::ProcessResult> result = process::RunProcess(spec);
  if (!result.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", argv[0], " (", what,
                     "): ", result.status().message(), kInstallHint));
  }
  if (result->timed_out || result->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        argv[0], " failed (", what, "): ", process::ShortReason(result->output),
        kInstallHint));
  }
  return result;
}

// "Functions shown: N" and "Maximum function count: N" from `show`.
std::string SummaryOf(const std::string& show) {
  std::vector<std::string> kept;
  size_t start = 0;
  while (start < show.size()) {
    size_t end = show.find('\n', start);
    if (end == std::string::npos) end = show.size();
    const std::string line = show.substr(start, end - start);
    if (line.rfind("Functions shown:", 0) == 0 ||
        line.rfind("Maximum function count:", 0) == 0 ||
        line.rfind("Total functions:", 0) == 0) {
      kept.push_back(line);
    }
    start = end + 1;
  }
  std::string summary;
  for (const std::string& line : kept) {
    absl::StrAppend(&summary, summary.empty() ? "" : "; ", line);
  }
  return summary;
}

}  // namespace

absl::StatusOr<std::string> ProfileUseFlag(const std::string& profile) {
  std::error_code error;
  if (!fs::is_regular_file(profile, error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--profile ", profile,
        ": no such file (write one with `phaseloop profile --workload W`)"));
  }
  return "-fprofile-instr-use=" + fs::absolute(profile).string();
}

absl::StatusOr<CollectedProfile> CollectProfile(
    const workloads::Workload& workload, const ProfileOptions& options,
    std::ostream& progress) {
  if (options.work_dir.empty()) {
    return absl::InvalidArgumentError("CollectProfile: no work_dir");
  }
  std::error_code error;
  fs::remove_all(options.work_dir, error);
  fs::create_directories(options.work_dir, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot create ", options.work_dir,
                                            ": ", error.message()));
  }
  const std::string work = fs::absolute(options.work_dir).string();
  absl::StatusOr<std::string> source =
      workloads::ResolveWorkloadSource(workload, progress);
  if (!source.ok()) return source.status();
  workloads::Workload slower = workload;
  CollectedProfile collected;
  for (workloads::Input& input : slower.inputs) {
    if (input.generate.empty()) continue;
    ++collected.generated_inputs;
    if (options.input_seed) input.seed = *options.input_seed;
  }
  for (workloads::RunCommand& run : slower.runs) {
    run.timeout_s *= kInstrumentedTimeoutFactor;
  }
  absl::StatusOr<runner::PreparedInputs> inputs =
      runner::PrepareInputs(slower, *source, work + "/inputs", progress);
  if (!inputs.ok()) return inputs.status();

  runner::Variant variant;
  variant.name = "profile";
  variant.policy = "baseline";
  variant.opt_level = options.opt_level;
  variant.profile_instrumented = true;
  variant.link_flags = options.link_flags;
  absl::StatusOr<runner::BuiltVariant> built = runner::BuildVariant(
      workload, *source, options.compilers, variant, work + "/build", progress);
  if (!built.ok()) return built.status();

  const std::string run_dir = work + "/run";
  if (absl::Status ready =
          runner::PrepareRunDirectory(slower, *built, *inputs, run_dir);
      !ready.ok()) {
    return ready;
  }
  runner::PassOptions pass;
  pass.profile_out_dir = work + "/raw";
  progress << "  profile: " << workload.name << ": " << workload.runs.size()
           << " run command(s), instrumented ..." << std::flush;
  absl::StatusOr<std::vector<runner::CommandRun>> runs =
      runner::RunPass(slower, run_dir, pass);
  if (!runs.ok()) return runs.status();
  for (size_t i = 0; i < runs->size(); ++i) {
    const runner::CommandRun& run = (*runs)[i];
    collected.run_s += run.measurement.wall_s;
    const int expected = slower.runs[i].check.exit_status;
    if (run.measurement.timed_out || run.measurement.exit_status != expected) {
      progress << " failed\n";
      return absl::FailedPreconditionError(absl::StrCat(
          workload.path, ": ", run.name, ": the instrumented run ",
          run.measurement.timed_out
              ? absl::StrCat("ran over ", slower.runs[i].timeout_s,
                             " s (4x its timeout_s)")
              : absl::StrCat("exited ", run.measurement.exit_status, ", not ",
                             expected),
          "; its directory: ", run_dir));
    }
  }
  progress << " " << collected.run_s << " s\n";

  std::vector<std::string> merge = {options.llvm_profdata, "merge", "-o"};
  collected.path = options.out.empty()
                       ? work + "/" + workload.name + ".profdata"
                       : fs::absolute(options.out).string();
  const std::string temp = collected.path + ".tmp";
  merge.push_back(temp);
  for (const auto& entry :
       fs::directory_iterator(pass.profile_out_dir, error)) {
    if (entry.path().extension() == ".profraw") {
      merge.push_back(entry.path().string());
      ++collected.raw_profiles;
    }
  }
  if (collected.raw_profiles == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        workload.path, ": the instrumented run wrote no profile under ",
        pass.profile_out_dir,
        " (a program that ends by _exit or a signal writes none; does the "
        "build link its programs with $CC?)"));
  }
  std::sort(merge.begin() + 4, merge.end());
  if (!fs::path(collected.path).parent_path().empty()) {
    fs::create_directories(fs::path(collected.path).parent_path(), error);
  }
  absl::StatusOr<process::ProcessResult> merged =
      RunTool(merge, "merging the raw profiles");
  if (!merged.ok()) return merged.status();
  fs::rename(temp, collected.path, error);
  if (error) {
    return absl::InternalError(absl::StrCat(
        "cannot move ", temp, " to ", collected.path, ": ", error.message()));
  }
  absl::StatusOr<process::ProcessResult> shown = RunTool(
      {options.llvm_profdata, "show", collected.path}, "reading the profile");
  if (!shown.ok()) return shown.status();
  collected.summary = SummaryOf(shown->output);
  collected.build_s = built->build_s;
  progress << "  profile: " << collected.path << " (" << collected.raw_profiles
           << " processes; " << collected.summary << ")\n";
  return collected;
}

}  // namespace phaseloop::profiling
