#ifndef PHASELOOP_COMMON_METRICS_METRICS_REGISTRY_H_
#define PHASELOOP_COMMON_METRICS_METRICS_REGISTRY_H_

// Counters and gauges rendered in the Prometheus text exposition format
// (version 0.0.4), served by metrics_http_server.h at /metrics.
//
// A metric family is a name with its help text and type; each Add* call adds
// (or returns the existing) series of that family with one label set.
// Names follow Prometheus rules: metric names [a-zA-Z_:][a-zA-Z0-9_:]*,
// label names [a-zA-Z_][a-zA-Z0-9_]* not starting with "__". Metric names
// and label sets are the program's own constants, so a bad name, or a name
// reused with another type or help, is a programmer error: Add* prints it
// to stderr and aborts.
//
// Thread-safety: every method may be called from any thread. Increment and
// Set are lock-free (one atomic compare-and-swap or store); Add* and
// RenderPrometheusText take the registry's mutex. Returned references stay
// valid as long as the registry.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace phaseloop::metrics {

// A value that only goes up (events counted since the process started).
class Counter {
 public:
  // Adds `v` (>= 0; negative and NaN increments are ignored).
  void Increment(double v = 1);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down (a lag, a queue length).
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Counter& AddCounter(const std::string& name, const std::string& help,
                      const std::map<std::string, std::string>& labels = {});
  Gauge& AddGauge(const std::string& name, const std::string& help,
                  const std::map<std::string, std::string>& labels = {});

  // Families in name order, series in label order:
  //   # HELP name help (\ and newline escaped)
  //   # TYPE name counter|gauge
  //   name{label="value",...} 42
  // Label values escape \, " and newline.
  std::string RenderPrometheusText() const;

 private:
  enum class Type { kCounter, kGauge };
  struct Family {
    Type type;
    std::string help;
    // label set → series; exactly one of the two is set per series.
    std::map<std::map<std::string, std::string>, std::unique_ptr<Counter>>
        counters;
    std::map<std::map<std::string, std::string>, std::unique_ptr<Gauge>> gauges;
  };
  Family& FamilyFor(const std::string& name, const std::string& help,
                    const std::map<std::string, std::string>& labels,
                    Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;  // guarded by mu_
};

// Whether `name` is a valid Prometheus metric / label name.
bool IsValidMetricName(const std::string& name);
bool IsValidLabelName(const std::string& name);

}  // namespace phaseloop::metrics

#endif  // PHASELOOP_COMMON_METRICS_METRICS_REGISTRY_H_
