#ifndef PHASELOOP_COMPILER_DRIVER_TESTING_TEST_UTIL_H_
#define PHASELOOP_COMPILER_DRIVER_TESTING_TEST_UTIL_H_

#include <string>
#include <vector>

namespace phaseloop::testing {

// Paths (relative to the test's working directory) of the fixture programs in
// compiler_driver/fixtures; the test must depend on //compiler_driver/fixtures.
std::vector<std::string> FixturePaths();

// Runs argv (argv[0] looked up on PATH); returns its exit code and fills
// `output` with stdout+stderr.
int RunCommand(const std::vector<std::string>& argv, std::string* output);

// A fresh directory under $TEST_TMPDIR (or /tmp).
std::string MakeTempDir();

// Reads a whole file ("" when missing).
std::string ReadFileOrEmpty(const std::string& path);

}  // namespace phaseloop::testing

#endif  // PHASELOOP_COMPILER_DRIVER_TESTING_TEST_UTIL_H_
