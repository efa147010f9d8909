#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_WRAPPER_SCRATCH_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_WRAPPER_SCRATCH_H_

// For tests that run the real phaseloop-cc binaries (testonly): a scratch
// directory where the wrapper runs as in a user's build, with its own spool
// an empty config file (so ~/.config/phaseloop/cc.conf never leaks in) and
// its own outcome cache (on by default, as for users: DIR/outcomes), and the
// decisions it spooled.

#include <map>
#include <string>
#include <vector>

#include "proto/phaseloop/v1/decision.pb.h"

namespace phaseloop::cc_wrapper::testing {

// `path` made absolute with symlinks resolved; `path` itself if it does
// not exist (tests run the runfiles' binaries from any directory).
std::string AbsolutePath(const std::string& path);

class WrapperScratch {
 public:
  WrapperScratch();  // a fresh temporary directory

  const std::string& dir() const { return dir_; }
  const std::string& spool() const { return spool_; }

  // Runs `argv` in dir() with PHASELOOP_SPOOL=spool(), PHASELOOP_CONFIG=
  // the empty config, PHASELOOP_OUTCOME_CACHE=dir()/outcomes, plus `env`
  // (which may override them); returns the exit code, stdout+stderr in
  // `output` when given.
  int Run(const std::vector<std::string>& argv,
          const std::map<std::string, std::string>& env = {},
          std::string* output = nullptr) const;

  // Every decision spooled so far (a test failure if the spool is
  // unreadable).
  std::vector<v1::Decision> Decisions() const;

 private:
  std::string dir_;
  std::string spool_;
};

}  // namespace phaseloop::cc_wrapper::testing

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_WRAPPER_SCRATCH_H_
