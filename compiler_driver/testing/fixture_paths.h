#ifndef PHASELOOP_COMPILER_DRIVER_FIXTURES_FIXTURE_PATHS_H_
#define PHASELOOP_COMPILER_DRIVER_FIXTURES_FIXTURE_PATHS_H_

#include <string>
#include <vector>

namespace phaseloop::testing {

// Paths (relative to the test's working directory), sorted, of the fixture
// programs in compiler_driver/fixtures; the test must have
// //compiler_driver/fixtures in its data.
std::vector<std::string> FixturePaths();

// The path of one fixture by file name (e.g. "bits.c"); the test fails (and
// `name` is returned) when there is none.
std::string FixturePath(const std::string& name);

}  // namespace phaseloop::testing

#endif  // PHASELOOP_COMPILER_DRIVER_FIXTURES_FIXTURE_PATHS_H_
