#ifndef PHASELOOP_COMMON_TESTING_TEST_UTIL_H_
#define PHASELOOP_COMMON_TESTING_TEST_UTIL_H_

#include <string>
#include <vector>

// Helpers every stage's tests use: temp directories, running a binary,
// reading a file. Test-only; depends on no stage.
namespace phaseloop::testing {

// Runs argv (argv[0] looked up on PATH); returns its exit code and fills
// `output` with stdout+stderr.
int RunCommand(const std::vector<std::string>& argv, std::string* output);

// A fresh directory under $TEST_TMPDIR (or /tmp).
std::string MakeTempDir();

// Reads a whole file ("" when missing).
std::string ReadFileOrEmpty(const std::string& path);

// The pid a process wrote into `path` (written whole, e.g. by `mv`), waited
// for up to 5 s; "" when none came.
std::string WaitForPidFile(const std::string& path);

// Whether process `pid` is gone: no /proc entry, or a zombie (dead, waiting
// for its parent to reap it). WaitForProcessGone waits up to 3 s for it.
bool ProcessGone(const std::string& pid);
bool WaitForProcessGone(const std::string& pid);

}  // namespace phaseloop::testing

#endif  // PHASELOOP_COMMON_TESTING_TEST_UTIL_H_
