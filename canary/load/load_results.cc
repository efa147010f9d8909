#include "canary/load/load_results.h"

namespace phaseloop::canary::load {
namespace {

double QuantileOrZero(const sli::LatencySketch& sketch, double q) {
  auto value = sketch.Quantile(q);
  return value.ok() ? *value : 0;
}

}  // namespace

LatencySummary Summarize(const sli::LatencySketch& sketch) {
  LatencySummary summary;
  if (sketch.empty()) return summary;
  summary.p50 = QuantileOrZero(sketch, 0.50);
  summary.p90 = QuantileOrZero(sketch, 0.90);
  summary.p95 = QuantileOrZero(sketch, 0.95);
  summary.p99 = QuantileOrZero(sketch, 0.99);
  summary.max = sketch.max();
  return summary;
}

int64_t TargetResults::error_count() const {
  int64_t total = 0;
  for (const auto& [reason, count] : errors) total += count;
  return total;
}

void TargetResults::Merge(const TargetResults& other) {
  intended += other.intended;
  sent += other.sent;
  ok += other.ok;
  for (const auto& [reason, count] : other.errors) errors[reason] += count;
  // Same default accuracy on both sides: the merge cannot fail.
  latency.Merge(other.latency).IgnoreError();
  start_delay.Merge(other.start_delay).IgnoreError();
  late_starts += other.late_starts;
}

double LoadResults::AchievedRate(const TargetResults& r) const {
  return elapsed_s > 0 ? static_cast<double>(r.done()) / elapsed_s : 0;
}

}  // namespace phaseloop::canary::load
