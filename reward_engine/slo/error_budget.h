#ifndef PHASELOOP_REWARD_ENGINE_SLO_ERROR_BUDGET_H_
#define PHASELOOP_REWARD_ENGINE_SLO_ERROR_BUDGET_H_

// Error budgets and multiwindow burn rates of SLOs, from per-window counts
// of good and total requests (the reward engine derives them from merged SLI
// sketches). Pure and deterministic: time is the caller's event time.
//
// For an SLO with target t over a rolling window of length L, at time `now`:
//  - Occurrences: every request is an event; Timeslices: every observed
//    slice is an event — time_slice_window_ms of engine windows, aligned to
//    multiples of it (one engine window without it) — good when its
//    requests' good / total >= time_slice_target (slices without requests
//    are not counted; the slice still filling is judged on its requests so
//    far).
//  - An observation belongs to a lookback [now - W, now) when its
//    window_start_ms lies in it; a slice, when any of its windows does.
//  - burn rate over W = (bad / total in W) / (1 - t), 0 with no events;
//  - error budget remaining = 1 - bad_L / ((1 - t) * total_L), 1 with no
//    events; negative once overspent;
//  - alerts (Google SRE workbook, multiwindow multi-burn-rate, 30-day SLO):
//    page when both 1h and 5m burn rates exceed 14.4, ticket-fast when 6h
//    and 30m exceed 6, ticket-slow when 3d and 6h exceed 1.
//
// Each SLO counts its own good requests: an observation that carries its
// window's latencies gives every SLO of the service the requests within
// that SLO's threshold that did not fail (GoodRequests); one without gives
// `good` to all of them.
//
// Memory: observations are kept per (service, group) by window_start_ms
// (about 56 bytes each, 8 more per SLO of the service), for
// the longest of the SLO windows and 3 days behind the newest window end
// seen; older ones are dropped, and an observation that old on arrival is
// ignored. That is O(window / SLI window length) entries per group.
//
// Thread-safety: none; one thread at a time (the engine's).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "phaseloop/v1/slo.pb.h"
#include "reward_engine/sli/latency_sketch.h"
#include "reward_engine/slo/slo_config.h"

namespace phaseloop::slo {

// Requests of one (service, group) in one SLI window.
struct SloWindowObservation {
  std::string service, group;
  int64_t window_start_ms = 0, window_end_ms = 0;
  int64_t total = 0, good = 0;  // good: within the threshold, not failed
  // The window's latencies (total of them) and failed requests: when set,
  // each SLO's good requests are GoodRequests(*latencies, error_latencies,
  // errors, its threshold), and `good` is not used.
  std::optional<sli::LatencySketch> latencies;
  int64_t errors = 0;
  // The latencies of the failures whose latency is known (some of `errors`).
  sli::LatencySketch error_latencies;
};

// Requests that met an SLO of latency threshold `threshold_seconds`: within
// it and not failed. `failures` holds the latencies of the failures whose
// latency is known (at most `errors` of them); the others are taken as
// within the threshold, the bound records without failure latencies allow
// (a slow failure is then counted twice, as slow and as failed). In
// [0, latencies.count()].
int64_t GoodRequests(const sli::LatencySketch& latencies,
                     const sli::LatencySketch& failures, int64_t errors,
                     double threshold_seconds);

// One lookback of the burn-rate table.
struct BurnWindow {
  const char* name;
  int64_t ms;
};
inline constexpr BurnWindow kBurnWindows[] = {
    {"5m", 5 * 60 * 1000},           {"30m", 30 * 60 * 1000},
    {"1h", 60 * 60 * 1000},          {"6h", 6 * 60 * 60 * 1000},
    {"3d", 3 * 24 * 60 * 60 * 1000},
};

// One multiwindow alert (the SRE workbook's): fires when both burn rates
// exceed the rate that spends `budget_percent` % of the SLO's budget within
// the long window — budget_percent / 100 x the SLO's window / the long
// window, at least 1 (a slower burn leaves budget over): 14.4, 6 and 1 for
// a 30-day SLO, 3.36, 1.4 and 1 for 7 days (fixed numbers held a 7-day
// SLO's page to 8.6 % of its budget an hour).
struct AlertRule {
  const char* name;
  const char* long_window;
  const char* short_window;
  int budget_percent;
};
inline constexpr AlertRule kAlertRules[] = {
    {"page", "1h", "5m", 2},
    {"ticket-fast", "6h", "30m", 5},
    {"ticket-slow", "3d", "6h", 10},
};

// The burn rate above which `rule` fires for an SLO window of `slo_window_ms`.
double AlertThreshold(const AlertRule& rule, int64_t slo_window_ms);

class ErrorBudgetTracker {
 public:
  // Observations are matched to the SLOs of their service; SLOs are assumed
  // valid (LoadSloFile's checks).
  explicit ErrorBudgetTracker(std::vector<Slo> slos);

  // Records one window. Idempotent per (service, group, window_start_ms): a
  // replayed window replaces the earlier one, never double counts. Ignored
  // when no SLO names the service, when total <= 0 or good is outside
  // [0, total] (clamped), or when older than what is kept.
  void Observe(const SloWindowObservation& obs);

  // One status per (SLO, group) with kept observations, sorted by service,
  // SLO name and group, computed at event time `now_ms`.
  std::vector<v1::BudgetStatus> Status(int64_t now_ms) const;

  // Observations currently kept (for tests and the memory bound).
  size_t kept_windows() const;

 private:
  struct Counts {
    int64_t window_start_ms = 0;
    int64_t window_end_ms = 0;
    int64_t total = 0;
    // Per SLO of the service, in slos_ order.
    std::vector<int64_t> good;
  };
  // Sorted by window_start_ms, unique: windows mostly arrive in order
  // (append) and expire from the front; a deque keeps both cheap and the
  // Status scan nearly contiguous (a std::map was 4.5x slower to scan in
  // error_budget_benchmark).
  using Windows = std::deque<Counts>;

  // `position`: the SLO's index among its service's SLOs (Counts::good).
  v1::BudgetStatus StatusOf(const Slo& slo, size_t position,
                            const std::string& group, const Windows& windows,
                            int64_t now_ms) const;

  std::vector<Slo> slos_;
  // service → how far back (ms) its windows are kept.
  std::map<std::string, int64_t> retention_ms_;
  std::map<std::pair<std::string, std::string>, Windows> windows_;
  std::map<std::string, int64_t> newest_end_ms_;  // per service
};

}  // namespace phaseloop::slo

#endif  // PHASELOOP_REWARD_ENGINE_SLO_ERROR_BUDGET_H_
