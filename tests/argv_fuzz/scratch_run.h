#ifndef PHASELOOP_TESTS_ARGV_FUZZ_SCRATCH_RUN_H_
#define PHASELOOP_TESTS_ARGV_FUZZ_SCRATCH_RUN_H_

// Running one side of a case (clang or the wrapper) in a scratch directory
// and taking what it left: exit status, output, files and their bytes.

#include <map>
#include <set>
#include <string>
#include <vector>

namespace phaseloop::argv_fuzz {

struct Tree {
  std::map<std::string, std::string> files;  // relative path -> bytes
  std::set<std::string> dirs;                // relative paths
};

struct RunResult {
  int status = 0;
  std::string out, err;
  Tree tree;
};

std::string ReadFile(const std::string& path);
bool WriteFile(const std::string& path, const std::string& contents);
// `name` looked up on PATH (a path is returned as it is).
std::string ResolveProgram(const std::string& name);
// Every file (with its bytes) and directory below `dir`.
Tree Snapshot(const std::string& dir);
// `text` with the scratch directory and the run's TMPDIR names normalised.
std::string Normalise(std::string text, const std::string& scratch,
                      const std::string& tmp);
// Runs `argv` in `dir` (already populated); stdout/stderr go to files beside
// `dir`, never into it.
RunResult Run(const std::vector<std::string>& argv,
              const std::vector<std::string>& env, const std::string& dir,
              const std::string& stdin_path, const std::string& io_prefix,
              int timeout_s);

}  // namespace phaseloop::argv_fuzz

#endif  // PHASELOOP_TESTS_ARGV_FUZZ_SCRATCH_RUN_H_
