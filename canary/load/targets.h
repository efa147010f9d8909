#ifndef PHASELOOP_CANARY_LOAD_TARGETS_H_
#define PHASELOOP_CANARY_LOAD_TARGETS_H_

// The named endpoints a load run splits its traffic between ("baseline" →
// 127.0.0.1:P1, "canary" → 127.0.0.1:P2) and their weights, which the
// canary controller changes while the run goes on (5 % → 25 % → 50 %).
//
// Thread-safety: SetWeights and Choose may be called from any threads.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::canary::load {

struct Target {
  std::string name;
  std::string host;
  int port = 0;
  double weight = 1;
};

// "NAME=HOST:PORT[:WEIGHT]" (weight 1 when left out); InvalidArgument
// naming the text and the expected form.
absl::StatusOr<Target> ParseTarget(absl::string_view text);

class TargetSet {
 public:
  // InvalidArgument when there is no target, a name is empty or repeated, a
  // port is outside 1..65535, a weight is negative or not finite, or every
  // weight is 0.
  static absl::StatusOr<TargetSet> Create(std::vector<Target> targets);

  TargetSet(const TargetSet& other);
  TargetSet& operator=(const TargetSet& other);

  // The targets, in the order given (weights as of now).
  std::vector<Target> targets() const;
  int size() const { return static_cast<int>(size_); }
  // Index of target `name`, -1 when there is none.
  int IndexOf(absl::string_view name) const;

  // Replaces the weights by name (targets not named keep theirs). The
  // change applies to requests routed afterwards; requests already routed
  // keep their target. InvalidArgument (weights unchanged) for an unknown
  // name, a negative or non-finite weight, or all weights 0.
  absl::Status SetWeights(
      const std::vector<std::pair<std::string, double>>& weights);

  // The target of a request whose uniform draw is `u` in [0, 1): target i
  // covers [W_<i, W_<=i) / W, so equal draws give equal choices for equal
  // weights (the seeded routing is repeatable).
  int Choose(double u) const;

 private:
  TargetSet() = default;

  mutable std::mutex mutex_;
  std::vector<Target> targets_;  // guarded by mutex_ (weights change)
  size_t size_ = 0;              // fixed at creation
};

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_TARGETS_H_
