#include "staging_harness/profiling/bolt_optimization.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/timing/elapsed.h"
#include "staging_harness/profiling/instrumented_runs.h"

namespace phaseloop::profiling {
namespace fs = std::filesystem;
namespace {

constexpr char kInstallHint[] =
    "; llvm-bolt and merge-fdata come with Debian's bolt-16 package "
    "(tools/setup.sh installs it)";

// The layout BOLT's documentation recommends, without identical-code
// folding (two functions at one address can change what a program does).
const char* const kOptimizeFlags[] = {
    "-reorder-blocks=ext-tsp",
    "-reorder-functions=hfsort+",
    "-split-functions",
    "-split-all-cold",
    "-split-eh",
    "-use-gnu-stack",
    "-dyno-stats",
};

bool IsElf(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return false;
  char magic[4] = {};
  std::ifstream(path, std::ios::binary).read(magic, 4);
  return magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

// Whether a 64-bit little-endian ELF file keeps its code's relocations
// (a SHT_RELA section named .rela.text*, what --emit-relocs leaves; a
// shared library's .rela.dyn does not count).
bool HasCodeRelocations(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string elf((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  auto read = [&](size_t at, size_t size) -> uint64_t {
    uint64_t value = 0;
    // Offsets come from the file: `at + size` could wrap past 2^64.
    if (at > elf.size() || size > elf.size() - at) return 0;
    for (size_t i = 0; i < size; ++i) {
      value |= uint64_t(static_cast<unsigned char>(elf[at + i])) << (8 * i);
    }
    return value;
  };
  if (elf.size() < 64 || elf[4] != 2 /* ELFCLASS64 */ ||
      elf[5] != 1 /* little-endian */) {
    return false;
  }
  const uint64_t sections = read(0x28, 8);
  const uint64_t entry_size = read(0x3a, 2);
  const uint64_t count = read(0x3c, 2);
  const uint64_t names = sections + read(0x3e, 2) * entry_size;
  const uint64_t names_at = read(names + 0x18, 8);
  constexpr uint32_t kShtRela = 4;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t header = sections + i * entry_size;
    if (read(header + 4, 4) != kShtRela) continue;
    const uint64_t name = names_at + read(header, 4);
    if (name < elf.size() && elf.compare(name, 10, ".rela.text") == 0) {
      return true;
    }
  }
  return false;
}

// "taken branches -54.7%, executed instructions -1.2%" from -dyno-stats'
// second table (the one with changes in parentheses).
std::string EstimateOf(const std::string& output) {
  std::string estimate;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    for (absl::string_view name :
         {": taken branches (", ": executed instructions ("}) {
      const size_t at = line.find(name);
      if (at == absl::string_view::npos) continue;
      absl::string_view change = line.substr(at + name.size());
      change = change.substr(0, change.find(')'));
      absl::StrAppend(&estimate, estimate.empty() ? "" : ", ",
                      name.substr(2, name.size() - 4), " ", change);
    }
  }
  return estimate;
}

}  // namespace

absl::Status CheckBoltTools(const BoltOptions& options) {
  for (const std::string& tool : {options.llvm_bolt, options.merge_fdata}) {
    absl::StatusOr<process::ProcessResult> version =
        RunProfileTool({tool, "--version"}, "--version", kInstallHint);
    if (!version.ok()) return version.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<BoltResult> BoltOptimize(const workloads::Workload& workload,
                                        const std::string& source_tree,
                                        const runner::BuiltVariant& built,
                                        const runner::PreparedInputs& timed,
                                        const BoltOptions& options,
                                        const std::string& work_dir,
                                        std::ostream& progress) {
  std::error_code error;
  fs::remove_all(work_dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot remove ", work_dir, ": ", error.message()));
  }
  const std::string work = fs::absolute(work_dir).string();
  const std::string instrumented_dir = work + "/instrumented";
  const std::string profiles_dir = work + "/profiles";
  BoltResult result;
  result.artifacts_dir = work + "/artifacts";
  result.built_artifacts_hash = built.artifacts_hash;
  result.input_seed = options.input_seed;
  for (const std::string& dir :
       {instrumented_dir, profiles_dir, result.artifacts_dir}) {
    fs::create_directories(dir, error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("cannot create ", dir, ": ", error.message()));
    }
  }
  // Every artifact copied as built into both trees; the ELF ones are then
  // replaced.
  for (const std::string& artifact : workload.build.artifacts) {
    const fs::path from = fs::path(built.artifacts_dir) / artifact;
    for (const std::string& root : {instrumented_dir, result.artifacts_dir}) {
      const fs::path to = fs::path(root) / artifact;
      fs::create_directories(to.parent_path(), error);
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
      if (error) {
        return absl::InternalError(
            absl::StrCat("cannot copy ", from.string(), ": ", error.message()));
      }
    }
    if (IsElf(from)) result.artifacts.push_back({artifact});
  }
  if (result.artifacts.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(workload.path,
                     ": none of build.artifacts is an ELF program or "
                     "library: nothing for BOLT to optimise"));
  }

  // An artifact BOLT cannot take stays as built, with why; the stage fails
  // only when none could be rewritten.
  const auto started = std::chrono::steady_clock::now();
  progress << "  bolt: instrumenting " << result.artifacts.size()
           << " artifact(s)\n";
  std::vector<bool> instrumented_ok(result.artifacts.size(), false);
  for (size_t i = 0; i < result.artifacts.size(); ++i) {
    BoltedArtifact& artifact = result.artifacts[i];
    const std::string from = built.artifacts_dir + "/" + artifact.path;
    if (!HasCodeRelocations(from)) {
      artifact.note = absl::StrCat(
          "linked without its relocations, which BOLT needs: link with ",
          kBoltLinkFlag,
          " (stage --bolt adds it to every command that links through "
          "$CC/$CXX; a build that calls ld itself must pass --emit-relocs)");
      continue;
    }
    const std::string out = instrumented_dir + "/" + artifact.path;
    fs::remove(out, error);
    absl::StatusOr<process::ProcessResult> instrumented = RunProfileTool(
        {options.llvm_bolt, from, "-instrument",
         absl::StrCat("-instrumentation-file=", profiles_dir, "/", i, ".fdata"),
         "-instrumentation-file-append-pid", "-o", out},
        absl::StrCat("instrumenting ", artifact.path), kInstallHint);
    if (!instrumented.ok()) {
      artifact.note = std::string(instrumented.status().message());
      fs::copy_file(from, out, fs::copy_options::overwrite_existing, error);
      continue;
    }
    instrumented_ok[i] = true;
  }
  double bolt_s = timing::SecondsSince(started);

  InstrumentedWorkload training =
      ForInstrumentedRuns(workload, options.input_seed);
  result.generated_inputs = training.generated_inputs;
  runner::PreparedInputs made;
  if (options.input_seed) {
    absl::StatusOr<runner::PreparedInputs> inputs = runner::PrepareInputs(
        training.workload, source_tree, work + "/inputs", progress);
    if (!inputs.ok()) return inputs.status();
    made = *std::move(inputs);
  }
  const runner::PreparedInputs& inputs = options.input_seed ? made : timed;
  runner::BuiltVariant instrumented = built;
  instrumented.artifacts_dir = instrumented_dir;
  const std::string run_dir = work + "/run";
  if (absl::Status ready = runner::PrepareRunDirectory(
          training.workload, instrumented, inputs, run_dir);
      !ready.ok()) {
    return ready;
  }
  absl::StatusOr<double> run_s =
      RunInstrumentedPass(training.workload, run_dir, runner::PassOptions{},
                          "bolt", "BOLT-instrumented", progress);
  if (!run_s.ok()) return run_s.status();
  result.run_s = *run_s;
  // The run directory links the inputs it was given: a run that wrote into
  // them would have changed the stage's own copy.
  if (absl::Status same = runner::InputsUnchanged(
          inputs, run_dir,
          absl::StrCat(workload.path, ": the BOLT-instrumented run"));
      !same.ok()) {
    return same;
  }

  const auto optimizing = std::chrono::steady_clock::now();
  std::vector<std::string> notes;
  for (size_t i = 0; i < result.artifacts.size(); ++i) {
    BoltedArtifact& artifact = result.artifacts[i];
    auto unchanged = [&](std::string why) {
      if (!why.empty()) artifact.note = std::move(why);
      progress << "  bolt: " << artifact.path
               << ": unchanged: " << artifact.note << "\n";
      notes.push_back(absl::StrCat(artifact.path, ": ", artifact.note));
    };
    if (!instrumented_ok[i]) {
      unchanged("");
      continue;
    }
    std::vector<std::string> merge = {options.merge_fdata};
    const std::string prefix = absl::StrCat(i, ".fdata.");
    for (const auto& entry : fs::directory_iterator(profiles_dir, error)) {
      if (absl::StartsWith(entry.path().filename().string(), prefix)) {
        merge.push_back(entry.path().string());
      }
    }
    if (error) {
      return absl::InternalError(
          absl::StrCat("cannot list ", profiles_dir, ": ", error.message()));
    }
    artifact.profiles = static_cast<int>(merge.size()) - 1;
    if (artifact.profiles == 0) {
      unchanged(
          "it wrote no profile (no run executed it, or each process ended "
          "by _exit or a signal, which skip the profile's writer)");
      continue;
    }
    std::sort(merge.begin() + 1, merge.end());
    const std::string fdata = absl::StrCat(profiles_dir, "/", i, ".fdata");
    merge.insert(merge.end(), {"-o", fdata});
    absl::StatusOr<process::ProcessResult> merged = RunProfileTool(
        merge, absl::StrCat("merging ", artifact.path, "'s profiles"),
        kInstallHint);
    if (!merged.ok()) return merged.status();
    const std::string out = result.artifacts_dir + "/" + artifact.path;
    std::vector<std::string> optimize = {
        options.llvm_bolt, built.artifacts_dir + "/" + artifact.path, "-o",
        out + ".bolt", "-data=" + fdata};
    optimize.insert(optimize.end(), std::begin(kOptimizeFlags),
                    std::end(kOptimizeFlags));
    absl::StatusOr<process::ProcessResult> optimized = RunProfileTool(
        optimize, absl::StrCat("optimising ", artifact.path), kInstallHint);
    if (!optimized.ok()) {
      unchanged(std::string(optimized.status().message()));
      continue;
    }
    fs::rename(out + ".bolt", out, error);
    if (error) {
      return absl::InternalError(absl::StrCat(
          "cannot move ", out, ".bolt into place: ", error.message()));
    }
    artifact.optimized = true;
    artifact.estimate = EstimateOf(optimized->output);
    progress << "  bolt: " << artifact.path << ": " << artifact.profiles
             << " profile(s); BOLT's estimate: "
             << (artifact.estimate.empty() ? "none" : artifact.estimate)
             << "\n";
  }
  result.bolt_s = bolt_s + timing::SecondsSince(optimizing);
  if (notes.size() == result.artifacts.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        workload.path,
        ": BOLT rewrote none of its programs: ", absl::StrJoin(notes, "; ")));
  }
  absl::StatusOr<std::string> hash =
      runner::HashFiles(result.artifacts_dir, workload.build.artifacts);
  if (!hash.ok()) return hash.status();
  result.artifacts_hash = *std::move(hash);
  return result;
}

}  // namespace phaseloop::profiling
