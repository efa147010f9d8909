#ifndef PHASELOOP_COMMON_PROCESS_PARALLEL_FOR_H_
#define PHASELOOP_COMMON_PROCESS_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace phaseloop::process {

// Calls body(i) for every i in [0, n) on up to `jobs` threads (the caller's
// thread is one of them). Items are handed out in order; body must be
// thread-safe and must not throw. Returns when every call has returned.
inline void ParallelFor(size_t n, int jobs,
                        const std::function<void(size_t)>& body) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) body(i);
  };
  const size_t threads =
      std::min<size_t>(n, static_cast<size_t>(std::max(1, jobs)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

// The default --jobs: the machine's hardware threads (at least 1).
inline int DefaultJobs() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace phaseloop::process

#endif  // PHASELOOP_COMMON_PROCESS_PARALLEL_FOR_H_
