#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_STDERR_CAPTURE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_STDERR_CAPTURE_H_

// What LLVM prints by itself while the wrapper optimises and generates code.
// clang hands LLVM a diagnostic handler of its own for its backend (source
// locations, -Werror, -w, "N warnings generated."); the wrapper's contexts
// have none, so a backend warning or error (-Wframe-larger-than, the
// warning and error attributes, inline assembly's .warning, an unhonoured
// loop pragma) would be printed raw by LLVM, ignore -Werror and -w, and
// repeat once per candidate measured. The optimiser's child therefore runs
// with stderr (fd 2) sent to an anonymous file: anything written there
// sends the compile to plain clang, which reports it as clang does. (A
// backend error makes LLVM exit at once; that child's failure falls back
// too.)

#include <cstdio>
#include <string>

namespace phaseloop::cc_wrapper {

class StderrCapture {
 public:
  // Sends fd 2 to an anonymous file (memfd, else an unlinked temporary
  // file); when it cannot, stderr stays as it was and active() is false
  // (the optimiser then falls back to clang rather than let LLVM print).
  StderrCapture();
  ~StderrCapture();  // fd 2 restored
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  bool active() const { return saved_fd_ >= 0; }
  // The stream stderr was before, or stderr when not active. Owned by this
  // object; while it lives, the wrapper's trace lines (stage_trace.h) go
  // there.
  FILE* original() const { return original_ != nullptr ? original_ : stderr; }
  // What was written to stderr since, at most `limit` bytes.
  std::string Captured(size_t limit = 4096) const;

  // Whether the capture now active (if any) holds anything: the object
  // cache stores no object whose making printed a diagnostic (a later hit
  // would skip the backend, and the diagnostic with it).
  static bool ActiveCapturedAnything();

 private:
  int file_fd_ = -1;          // the capture file
  int saved_fd_ = -1;         // a duplicate of the old fd 2
  FILE* original_ = nullptr;  // over saved_fd_'s duplicate
};

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_STDERR_CAPTURE_H_
