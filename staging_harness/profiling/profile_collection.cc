#include "staging_harness/profiling/profile_collection.h"

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/process/subprocess.h"
#include "staging_harness/profiling/instrumented_runs.h"
#include "staging_harness/runner/workload_inputs.h"
#include "staging_harness/runner/workload_runs.h"
#include "staging_harness/workloads/workload_source.h"

namespace phaseloop::profiling {
namespace fs = std::filesystem;
namespace {

constexpr char kInstallHint[] =
    "; llvm-profdata-16 comes with Debian's llvm-16 package (tools/setup.sh "
    "installs it), or give --llvm-profdata";

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
  InstrumentedWorkload instrumented =
      ForInstrumentedRuns(workload, options.input_seed);
  const workloads::Workload& slower = instrumented.workload;
  CollectedProfile collected;
  collected.generated_inputs = instrumented.generated_inputs;
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
  absl::StatusOr<double> run_s = RunInstrumentedPass(
      slower, run_dir, pass, "profile", "instrumented", progress);
  if (!run_s.ok()) return run_s.status();
  collected.run_s = *run_s;

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
      RunProfileTool(merge, "merging the raw profiles", kInstallHint);
  if (!merged.ok()) return merged.status();
  fs::rename(temp, collected.path, error);
  if (error) {
    return absl::InternalError(absl::StrCat(
        "cannot move ", temp, " to ", collected.path, ": ", error.message()));
  }
  absl::StatusOr<process::ProcessResult> shown =
      RunProfileTool({options.llvm_profdata, "show", collected.path},
                     "reading the profile", kInstallHint);
  if (!shown.ok()) return shown.status();
  collected.summary = SummaryOf(shown->output);
  collected.build_s = built->build_s;
  progress << "  profile: " << collected.path << " (" << collected.raw_profiles
           << " processes; " << collected.summary << ")\n";
  return collected;
}

}  // namespace phaseloop::profiling
