#ifndef PHASELOOP_TESTS_PHASELOOP_CC_FIXTURE_H_
#define PHASELOOP_TESTS_PHASELOOP_CC_FIXTURE_H_

// The fixture of the end-to-end tests of phaseloop-cc / phaseloop-c++: the
// real binaries from the runfiles, a scratch directory with its own spool,
// the compiler_driver fixtures by file name.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/spool_reader.h"
#include "compiler_driver/cc_wrapper/wrapper_scratch.h"
#include "compiler_driver/testing/fixture_paths.h"

namespace phaseloop {

class PhaseloopCcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cc_ = cc_wrapper::testing::AbsolutePath(
        "compiler_driver/cc_wrapper/phaseloop-cc");
    cxx_ = cc_wrapper::testing::AbsolutePath(
        "compiler_driver/cc_wrapper/phaseloop-c++");
    for (const std::string& f : testing::FixturePaths()) {
      fixtures_[f.substr(f.rfind('/') + 1)] =
          cc_wrapper::testing::AbsolutePath(f);
    }
  }

  // Runs `argv` in dir_ with the wrapper's environment plus `env`; returns
  // the exit code, output (stdout+stderr) in `output`.
  int Run(const std::vector<std::string>& argv,
          const std::map<std::string, std::string>& env = {},
          std::string* output = nullptr) {
    return scratch_.Run(argv, env, output);
  }

  std::string Read(const std::string& name) {
    return testing::ReadFileOrEmpty(dir_ + "/" + name);
  }

  std::vector<v1::Decision> Decisions() { return scratch_.Decisions(); }

  cc_wrapper::testing::WrapperScratch scratch_;
  const std::string dir_ = scratch_.dir();
  const std::string spool_ = scratch_.spool();
  std::string cc_, cxx_;
  std::map<std::string, std::string> fixtures_;
};

}  // namespace phaseloop

#endif  // PHASELOOP_TESTS_PHASELOOP_CC_FIXTURE_H_
