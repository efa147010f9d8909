#include "staging_harness/runner/workload_inputs.h"

#include <filesystem>
#include <ostream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/process/subprocess.h"
#include "staging_harness/runner/workload_build.h"

namespace phaseloop::runner {
namespace fs = std::filesystem;
namespace {

// Runs `input`'s generator in `dir` writing `output`; FailedPrecondition
// naming `where` when it fails, runs over 10 minutes or writes nothing.
absl::Status Generate(const workloads::Input& input, const std::string& dir,
                      const fs::path& output, const std::string& where) {
  process::ProcessSpec spec;
  spec.argv = {"sh", "-c", input.generate};
  spec.cwd = dir;
  spec.env = {absl::StrCat("SEED=", input.seed), "OUTPUT=" + output.string()};
  spec.timeout_seconds = 600;
  absl::StatusOr<process::ProcessResult> result = process::RunProcess(spec);
  if (!result.ok()) return result.status();
  if (result->exit_code == 0 && !result->timed_out &&
      fs::is_regular_file(output)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      where, ": the generator ",
      result->timed_out        ? "ran over 10 minutes"
      : result->exit_code != 0 ? absl::StrCat("exited ", result->exit_code)
                               : "wrote no $OUTPUT",
      result->output.empty()
          ? std::string(" (it printed nothing)")
          : absl::StrCat(": ", process::ShortReason(result->output))));
}

}  // namespace

absl::StatusOr<PreparedInputs> PrepareInputs(
    const workloads::Workload& workload, const std::string& source_tree,
    const std::string& dir, std::ostream& progress) {
  PreparedInputs inputs;
  inputs.dir = dir;
  std::error_code error;
  fs::remove_all(dir, error);
  fs::create_directories(dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", dir, ": ", error.message()));
  }
  for (size_t i = 0; i < workload.inputs.size(); ++i) {
    const workloads::Input& input = workload.inputs[i];
    const std::string where =
        absl::StrCat(workload.path, ": inputs[", i, "] (", input.file, ")");
    const fs::path target = fs::path(dir) / input.file;
    fs::create_directories(target.parent_path(), error);
    if (input.generate.empty()) {
      fs::copy_file(fs::path(source_tree) / input.file, target,
                    fs::copy_options::overwrite_existing, error);
      if (error) {
        return absl::FailedPreconditionError(absl::StrCat(
            where, ": shipped input not found under the source tree ",
            source_tree, " (", error.message(),
            "); give a `generate` command or fix the path"));
      }
    } else {
      progress << "  input " << input.file << " (seed " << input.seed << ") ..."
               << std::flush;
      if (absl::Status s = Generate(input, dir, target, where); !s.ok()) {
        progress << " failed\n";
        return s;
      }
      // Run again into a file of the same name elsewhere: a generator whose
      // bytes are not its seed's alone (an unseeded random number, the
      // time, a hash order) would make every staging's inputs differ, and
      // figures from two stagings incomparable, without a word.
      const std::string check_dir = dir + "/.determinism-check";
      const fs::path again = fs::path(check_dir) / input.file;
      fs::create_directories(again.parent_path(), error);
      absl::Status second = Generate(input, dir, again, where);
      const bool same =
          second.ok() &&
          HashFiles(dir, {input.file}).value_or("first") ==
              HashFiles(check_dir, {input.file}).value_or("second");
      fs::remove_all(check_dir, error);
      if (!second.ok()) {
        progress << " failed\n";
        return second;
      }
      if (!same) {
        progress << " not deterministic\n";
        return absl::FailedPreconditionError(absl::StrCat(
            where, ": the generator is not deterministic: two runs with SEED=",
            input.seed,
            " wrote different bytes; make its output depend on $SEED alone "
            "(seed its random numbers with it, e.g. awk's srand($SEED))"));
      }
      progress << " " << fs::file_size(target, error) << " bytes\n";
    }
    inputs.files.push_back(input.file);
  }
  absl::StatusOr<std::string> hash = HashFiles(dir, inputs.files);
  if (!hash.ok()) return hash.status();
  inputs.hash = *hash;
  return inputs;
}

absl::Status InputsUnchanged(const PreparedInputs& inputs,
                             const std::string& dir,
                             const std::string& after_what) {
  absl::StatusOr<std::string> hash = HashFiles(dir, inputs.files);
  if (hash.ok() && *hash == inputs.hash) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      after_what, " changed or removed its inputs in ", dir, " (",
      hash.ok() ? "different bytes" : hash.status().message(),
      "); a run must leave its inputs as they are: write outputs to new "
      "files or to stdout (e.g. bzip2 -k, or -c)"));
}

}  // namespace phaseloop::runner
