#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_FRONTEND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_FRONTEND_H_

// Running clang's frontend for one source of the user's compile: the
// arguments from argument_processing (CompileJob::frontend_args) with the
// bitcode placeholder replaced by a temporary file. Its diagnostics are
// captured, not shown: the wrapper shows them once it succeeds, and on a
// fallback plain clang shows its own (never twice).
//
// Two halves, so that the launcher can start the frontend and then exec the
// optimizer, whose start-up (LLVM's static initialisers) overlaps the
// frontend: the running frontend is handed over in an environment variable
// (a child survives its parent's exec). Standard library only.

#include <string>
#include <vector>

namespace phaseloop::cc_wrapper {

// A frontend process that was started.
struct StartedFrontend {
  int pid = -1;
  std::string bitcode_path;
  std::string stderr_path;
  std::string error;  // why it could not start (pid < 0)
};

struct FrontendRun {
  bool ok = false;
  std::string bitcode;      // the unoptimised module
  std::string diagnostics;  // clang's stderr
  std::string error;        // why !ok
};

// `clang` is looked up on PATH. When this process's stderr is a terminal
// and the arguments do not choose, colours are asked for, as clang would
// decide for itself.
StartedFrontend StartFrontend(const std::string& clang,
                              const std::vector<std::string>& frontend_args);

// Waits for it and collects its outputs (the temporary files are removed).
FrontendRun FinishFrontend(const StartedFrontend& started,
                           const std::string& clang);

// The hand-over through exec: PHASELOOP_STARTED_FRONTEND=pid:bitcode:stderr.
inline constexpr char kStartedFrontendEnv[] = "PHASELOOP_STARTED_FRONTEND";
std::string EncodeStartedFrontend(const StartedFrontend& started);
// Reads and unsets the variable; pid < 0 when absent or malformed.
StartedFrontend TakeStartedFrontend();

// Creates `path` (which must not exist) holding `bytes`; false with `error`.
bool WriteNewFile(const std::string& path, const std::string& bytes,
                  std::string* error);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_FRONTEND_H_
