#include "reward_engine/slo/error_budget.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

namespace phaseloop::slo {
namespace {

// The longest lookback of the burn-rate table.
constexpr int64_t kLongestBurnWindowMs = kBurnWindows[4].ms;

struct Tally {
  int64_t total = 0;
  int64_t good = 0;
  int64_t bad() const { return total - good; }
};

// The first window starting at or after `start_ms`.
template <typename Deque>
auto StartingAtOrAfter(Deque& windows, int64_t start_ms) {
  return std::lower_bound(windows.begin(), windows.end(), start_ms,
                          [](const auto& counts, int64_t start) {
                            return counts.window_start_ms < start;
                          });
}

double BurnRate(const Tally& tally, double target) {
  if (tally.total == 0) return 0;
  return (static_cast<double>(tally.bad()) / tally.total) / (1 - target);
}

}  // namespace

int64_t GoodRequests(const sli::LatencySketch& latencies,
                     const sli::LatencySketch& failures, int64_t errors,
                     double threshold_seconds) {
  const int64_t failures_of_unknown_latency =
      std::max<int64_t>(errors - failures.count(), 0);
  const int64_t good = latencies.CountAtOrBelow(threshold_seconds) -
                       failures.CountAtOrBelow(threshold_seconds) -
                       failures_of_unknown_latency;
  return std::clamp<int64_t>(good, 0, latencies.count());
}

ErrorBudgetTracker::ErrorBudgetTracker(std::vector<Slo> slos)
    : slos_(std::move(slos)) {
  std::sort(slos_.begin(), slos_.end(), [](const Slo& a, const Slo& b) {
    return std::tie(a.service, a.name) < std::tie(b.service, b.name);
  });
  for (const Slo& slo : slos_) {
    int64_t& retention = retention_ms_[slo.service];
    retention = std::max({retention, slo.window_ms, kLongestBurnWindowMs});
  }
}

void ErrorBudgetTracker::Observe(const SloWindowObservation& obs) {
  auto retention = retention_ms_.find(obs.service);
  if (retention == retention_ms_.end() || obs.total <= 0) return;
  int64_t& newest_end = newest_end_ms_[obs.service];
  const bool newer = obs.window_end_ms > newest_end;
  if (newer) newest_end = obs.window_end_ms;
  const int64_t horizon = newest_end - retention->second;
  if (obs.window_start_ms < horizon) return;

  Windows& windows = windows_[{obs.service, obs.group}];
  Counts counts{obs.window_start_ms, obs.window_end_ms, obs.total, {}};
  for (const Slo& slo : slos_) {
    if (slo.service != obs.service) continue;
    const int64_t good =
        obs.latencies ? GoodRequests(*obs.latencies, obs.error_latencies,
                                     obs.errors, slo.threshold_ms / 1000.0)
                      : obs.good;
    counts.good.push_back(std::clamp<int64_t>(good, 0, obs.total));
  }
  auto at = windows.end();
  if (!windows.empty() &&
      windows.back().window_start_ms >= obs.window_start_ms) {
    at = StartingAtOrAfter(windows, obs.window_start_ms);
  }
  if (at != windows.end() && at->window_start_ms == obs.window_start_ms) {
    *at = std::move(counts);  // a replayed window replaces the earlier one
  } else {
    windows.insert(at, std::move(counts));
  }

  if (!newer) return;
  // Drop what no lookback ending at the newest window can reach.
  for (auto it = windows_.lower_bound({obs.service, ""});
       it != windows_.end() && it->first.first == obs.service;) {
    Windows& group_windows = it->second;
    group_windows.erase(group_windows.begin(),
                        StartingAtOrAfter(group_windows, horizon));
    it = group_windows.empty() ? windows_.erase(it) : std::next(it);
  }
}

size_t ErrorBudgetTracker::kept_windows() const {
  size_t n = 0;
  for (const auto& [key, windows] : windows_) n += windows.size();
  return n;
}

std::vector<v1::BudgetStatus> ErrorBudgetTracker::Status(int64_t now_ms) const {
  std::vector<v1::BudgetStatus> statuses;
  size_t position = 0;  // of the SLO among its service's
  for (size_t i = 0; i < slos_.size(); ++i) {
    const Slo& slo = slos_[i];
    position = i > 0 && slos_[i - 1].service == slo.service ? position + 1 : 0;
    for (auto it = windows_.lower_bound({slo.service, ""});
         it != windows_.end() && it->first.first == slo.service; ++it) {
      statuses.push_back(
          StatusOf(slo, position, it->first.second, it->second, now_ms));
    }
  }
  return statuses;  // slos_ and windows_ are sorted: (service, name, group)
}

double AlertThreshold(const AlertRule& rule, int64_t slo_window_ms) {
  int64_t long_ms = 0;
  for (const BurnWindow& window : kBurnWindows) {
    if (std::string_view(window.name) == rule.long_window) long_ms = window.ms;
  }
  // Integer products first: 2 x 720 / 100 is 14.4 exactly as a double.
  // Never below 1: a slower burn leaves budget at the window's end.
  return std::max(1.0, static_cast<double>(rule.budget_percent) *
                           static_cast<double>(slo_window_ms) /
                           (100.0 * static_cast<double>(long_ms)));
}

v1::BudgetStatus ErrorBudgetTracker::StatusOf(const Slo& slo, size_t position,
                                              const std::string& group,
                                              const Windows& windows,
                                              int64_t now_ms) const {
  const bool timeslices = slo.budgeting_method == kTimeslices;
  const double slice_target =
      slo.time_slice_target > 0 ? slo.time_slice_target : slo.target;
  // One backward pass from now_ms over the windows any lookback reaches:
  // tallies[i] covers [now_ms - spans[i], now_ms); index kSlo is the SLO
  // window, the others follow kBurnWindows.
  constexpr size_t kLookbacks = std::size(kBurnWindows);
  constexpr size_t kSlo = kLookbacks;
  int64_t spans[kLookbacks + 1];
  for (size_t i = 0; i < kLookbacks; ++i) spans[i] = kBurnWindows[i].ms;
  spans[kSlo] = slo.window_ms;
  const int64_t longest = std::max(slo.window_ms, kLongestBurnWindowMs);
  Tally tallies[kLookbacks + 1];
  auto count = [&](int64_t start_ms, const Tally& add) {
    for (size_t i = 0; i <= kLookbacks; ++i) {
      if (start_ms >= now_ms - spans[i]) {
        tallies[i].total += add.total;
        tallies[i].good += add.good;
      }
    }
  };
  // Timeslices: the windows of one slice (time_slice_window_ms long, from
  // multiples of it; one window each without it) are one event, good when
  // their requests meet the slice target. A slice belongs to every lookback
  // it overlaps (its newest window in it): a slice longer than a lookback
  // still counts there (by its first window, a 1 h slice left the 5m
  // lookback empty for 55 minutes of an outage and the page silent), and
  // the slice still filling is judged on its requests so far.
  const int64_t slice_ms = slo.time_slice_window_ms;
  Tally slice;
  int64_t slice_index = 0;
  int64_t slice_newest_ms = 0;
  auto close_slice = [&] {
    if (slice.total == 0) return;
    count(slice_newest_ms,
          {1, static_cast<double>(slice.good) >= slice_target * slice.total});
    slice = Tally();
  };
  for (auto it = std::make_reverse_iterator(StartingAtOrAfter(windows, now_ms));
       it != windows.rend() && it->window_start_ms >= now_ms - longest; ++it) {
    const Counts& c = *it;
    const Tally add{c.total, c.good[position]};
    if (!timeslices) {
      count(c.window_start_ms, add);
      continue;
    }
    const int64_t index =
        slice_ms > 0 ? c.window_start_ms / slice_ms : c.window_start_ms;
    if (slice.total > 0 && index != slice_index) close_slice();
    if (slice.total == 0) slice_newest_ms = c.window_start_ms;  // going back
    slice_index = index;
    slice.total += add.total;
    slice.good += add.good;
  }
  close_slice();

  v1::BudgetStatus status;
  status.set_service(slo.service);
  status.set_slo_name(slo.name);
  status.set_group(group);
  status.set_target(slo.target);
  status.set_window_ms(slo.window_ms);
  status.set_budgeting_method(slo.budgeting_method);
  status.set_threshold_ms(slo.threshold_ms);
  status.set_as_of_ms(now_ms);

  const Tally& in_window = tallies[kSlo];
  status.set_total(in_window.total);
  status.set_good(in_window.good);
  status.set_bad(in_window.bad());
  const double remaining =
      in_window.total == 0
          ? 1.0
          : 1.0 - in_window.bad() / ((1 - slo.target) * in_window.total);
  status.set_error_budget_remaining(remaining);
  status.set_budget_exhausted(in_window.total > 0 && remaining <= 0);

  std::map<std::string, double> rates;
  for (size_t i = 0; i < kLookbacks; ++i) {
    const BurnWindow& window = kBurnWindows[i];
    const Tally& t = tallies[i];
    v1::BurnRate* rate = status.add_burn_rates();
    rate->set_window(window.name);
    rate->set_window_ms(window.ms);
    rate->set_total(t.total);
    rate->set_bad(t.bad());
    rate->set_burn_rate(BurnRate(t, slo.target));
    rates[window.name] = rate->burn_rate();
  }
  for (const AlertRule& rule : kAlertRules) {
    const double threshold = AlertThreshold(rule, slo.window_ms);
    v1::BurnRateAlert* alert = status.add_alerts();
    alert->set_name(rule.name);
    alert->set_long_window(rule.long_window);
    alert->set_short_window(rule.short_window);
    alert->set_threshold(threshold);
    alert->set_long_burn_rate(rates[rule.long_window]);
    alert->set_short_burn_rate(rates[rule.short_window]);
    alert->set_firing(alert->long_burn_rate() > threshold &&
                      alert->short_burn_rate() > threshold);
  }
  return status;
}

}  // namespace phaseloop::slo
