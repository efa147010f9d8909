#ifndef PHASELOOP_TESTS_ARGV_FUZZ_FUZZ_CASE_H_
#define PHASELOOP_TESTS_ARGV_FUZZ_FUZZ_CASE_H_

// The cases of the differential argv fuzzer: random real clang command
// lines over the fixture programs, each generated from (seed, index) alone.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace phaseloop::argv_fuzz {

struct Case {
  int index = 0;
  bool cxx = false;                 // clang++-16 / phaseloop-c++
  std::vector<std::string> args;    // after argv[0], as given (may hold @rsp)
  std::vector<std::string> inputs;  // fixture file names copied in
  std::map<std::string, std::string> files;  // more files written in
  std::string stdin_fixture;                 // "" for /dev/null
};

// Case `index` of the run seeded `seed`, over these fixture file names (C
// and C++ sources). Deterministic: the same (seed, index) gives the same
// case with any standard library.
Case Generate(uint64_t seed, int index, const std::vector<std::string>& c_srcs,
              const std::vector<std::string>& cc_srcs);

}  // namespace phaseloop::argv_fuzz

#endif  // PHASELOOP_TESTS_ARGV_FUZZ_FUZZ_CASE_H_
