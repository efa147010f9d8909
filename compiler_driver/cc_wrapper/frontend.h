#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_FRONTEND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_FRONTEND_H_

// Running clang's frontend for one source of the user's compile: the
// arguments from argument_processing (CompileJob::frontend_args) with the
// bitcode placeholder replaced by a temporary file. Its diagnostics are
// captured, not shown: the wrapper shows them once it succeeds, and on a
// fallback plain clang shows its own (never twice).

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace phaseloop::cc_wrapper {

struct FrontendRun {
  bool ok = false;
  std::string bitcode;      // the unoptimised module
  std::string diagnostics;  // clang's stderr
  std::string error;        // why !ok
};

// `clang` is looked up on PATH. When this process's stderr is a terminal
// and the arguments do not choose, colours are asked for, as clang would
// decide for itself.
FrontendRun RunFrontend(const std::string& clang,
                        const std::vector<std::string>& frontend_args);

// Creates `path` (which must not exist) holding `bytes`.
absl::Status WriteNewFile(const std::string& path, const std::string& bytes);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_FRONTEND_H_
