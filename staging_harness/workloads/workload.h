#ifndef PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_H_
#define PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_H_

// A workload: a real program built by its own build system with a given
// compiler and optimisation level, the inputs it runs on, the commands that
// run it (each with a time limit) and what of a run must equal the
// baseline's. Described in YAML under configs/workloads/; the schema, with
// an example to copy, is staging_harness/workloads/README.md.
//
// LoadWorkload validates every field. Its InvalidArgument message has one
// line per problem, each naming the file and the field, e.g.
//   configs/workloads/bzip2.yaml: run[1].timeout_s: must be a positive
//   number, got 'soon'
// and names every problem of the file at once (every missing required
// field, every unknown key), so a user fixes a file in one pass.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::workloads {

// Workloads a learned speed policy is trained on, and the held-out ones it
// is judged on.
enum class Split { kTrain, kTest };

// How `build.command` receives the compiler: make and command read CC, CXX,
// CFLAGS and CXXFLAGS from the environment (a Makefile's `$(CC) $(CFLAGS)`);
// cmake reads them at configure time (so the command configures a fresh
// build directory); bazel builds through the phaseloop toolchain.
enum class BuildKind { kMake, kCmake, kCommand, kBazel };

struct BuildSpec {
  BuildKind kind = BuildKind::kMake;
  // Shell command run in a scratch copy of the source directory.
  std::string command;
  // Files the build produces (relative to the copy), copied into each run
  // directory; variants whose artifacts are byte-identical are one variant.
  std::vector<std::string> artifacts;
  double timeout_s = 600;
};

struct Input {
  // Where the run sees it, relative to the run directory. Shipped inputs
  // are this path under the source directory.
  std::string file;
  // A deterministic generator: a shell command writing $OUTPUT (= file)
  // from $SEED. Empty for a shipped file.
  std::string generate;
  uint64_t seed = 0;
};

enum class Compare { kExact, kNumeric };

// What of a run must equal the baseline's run (and the -O0 reference's).
struct Check {
  int exit_status = 0;             // every run must exit with it
  bool compare_stdout = true;      // YAML `stdout`: compare standard output
  std::vector<std::string> files;  // output files the run writes, compared
  Compare compare = Compare::kExact;
  // kNumeric: outputs are compared token by token; numbers a, b match when
  // |a - b| <= max(absolute_tolerance, relative_tolerance * |b|), other
  // tokens exactly.
  double relative_tolerance = 0;
  double absolute_tolerance = 0;
};

struct RunCommand {
  std::string name;     // "run[i]" unless given
  std::string command;  // shell command run in the run directory
  double timeout_s = 0;
  Check check;  // the workload's `check` unless the run has its own
};

struct Workload {
  std::string name;
  Split split = Split::kTrain;
  std::string description;  // may be empty
  // `source: <dir>`: the program's directory, absolute or relative to the
  // working directory. Empty for a Debian source package.
  std::string source_dir;
  // `source: debian:<package>`: a Debian 12 source package, fetched and
  // unpacked on first use (ResolveWorkloadSource, workload_source.h). Empty
  // for a local directory.
  std::string debian_package;
  BuildSpec build;
  std::vector<Input> inputs;
  std::vector<RunCommand> runs;
  std::string path;  // the YAML file it was loaded from
};

// Reads and validates one workload file. NotFound if it cannot be read,
// InvalidArgument (every problem, one per line) if it is not a valid
// workload.
absl::StatusOr<Workload> LoadWorkload(const std::string& path);

// Parses YAML text; `path` names it in messages and anchors `source`.
absl::StatusOr<Workload> ParseWorkload(const std::string& text,
                                       const std::string& path);

// Debian policy's source package names: at least two of a-z 0-9 + - .,
// starting with a letter or digit.
bool IsDebianPackageName(absl::string_view name);

const char* SplitName(Split split);
const char* BuildKindName(BuildKind kind);

}  // namespace phaseloop::workloads

#endif  // PHASELOOP_STAGING_HARNESS_WORKLOADS_WORKLOAD_H_
