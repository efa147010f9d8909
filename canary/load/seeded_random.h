#ifndef PHASELOOP_CANARY_LOAD_SEEDED_RANDOM_H_
#define PHASELOOP_CANARY_LOAD_SEEDED_RANDOM_H_

// The load generator's one source of randomness: SplitMix64 (Steele, Lea
// and Flood, OOPSLA 2014), with the draws spelled out here rather than
// taken from <random>'s distributions, whose results differ between
// standard libraries: the same seed gives the same arrivals, kinds, sizes,
// targets and payload bytes everywhere. Not thread-safe; one per thread.

#include <cmath>
#include <cstdint>

namespace phaseloop::canary::load {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi] (lo <= hi).
  int64_t Between(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return span == 0 ? static_cast<int64_t>(Next())
                     : lo + static_cast<int64_t>(Next() % span);
  }
  // Exponential with mean `mean`.
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }

 private:
  uint64_t state_;
};

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_SEEDED_RANDOM_H_
