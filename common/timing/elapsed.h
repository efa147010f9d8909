#ifndef PHASELOOP_COMMON_TIMING_ELAPSED_H_
#define PHASELOOP_COMMON_TIMING_ELAPSED_H_
// Seconds since a point on the steady clock: what progress lines, reports
// and benchmarks print, and the lab's searches stop on (their --budget-s).
// One helper for every stage (it was written out in a dozen files). The
// wrapper's budgets, which decide what a program becomes, count work, never
// this clock.

#include <chrono>

namespace phaseloop::timing {

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace phaseloop::timing

#endif  // PHASELOOP_COMMON_TIMING_ELAPSED_H_
