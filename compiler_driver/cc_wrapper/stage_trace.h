#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_STAGE_TRACE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_STAGE_TRACE_H_

// Timing for the wrapper: MicrosSince for decision records, and StageTrace,
// which with PHASELOOP_TRACE=1 prints the time since the previous mark of
// each stage on stderr (for profiling; silent otherwise).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace phaseloop::cc_wrapper {

inline int64_t MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now() - start)
      .count();
}

// Where trace lines go: stderr, or the user's stderr while the optimiser's
// child captures fd 2 (stderr_capture.h points it there).
inline FILE*& TraceStream() {
  static FILE* stream = stderr;
  return stream;
}

class StageTrace {
 public:
  explicit StageTrace(std::chrono::steady_clock::time_point start =
                          std::chrono::steady_clock::now())
      : enabled_(std::getenv("PHASELOOP_TRACE") != nullptr), last_(start) {}
  void Mark(const char* stage) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    std::fprintf(
        TraceStream(), "phaseloop-cc: %-10s %7.2f ms\n", stage,
        std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_STAGE_TRACE_H_
