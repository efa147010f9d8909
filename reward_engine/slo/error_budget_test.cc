#include "reward_engine/slo/error_budget.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace phaseloop::slo {
namespace {

constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kDay = 24 * 60 * kMinute;
constexpr int64_t kNow = 100 * kDay;

Slo MakeSlo(const std::string& method = kOccurrences, double target = 0.99) {
  Slo slo;
  slo.name = "latency";
  slo.service = "checkout";
  slo.threshold_ms = 250;
  slo.target = target;
  slo.window_ms = 30 * kDay;
  slo.budgeting_method = method;
  return slo;
}

// A one-minute window starting `minutes_ago` before kNow.
SloWindowObservation Window(double minutes_ago, int64_t total, int64_t good,
                            const std::string& group = "canary") {
  SloWindowObservation obs;
  obs.service = "checkout";
  obs.group = group;
  obs.window_start_ms = kNow - static_cast<int64_t>(minutes_ago * kMinute);
  obs.window_end_ms = obs.window_start_ms + kMinute;
  obs.total = total;
  obs.good = good;
  return obs;
}

double Burn(const v1::BudgetStatus& status, const std::string& window) {
  for (const auto& rate : status.burn_rates()) {
    if (rate.window() == window) return rate.burn_rate();
  }
  ADD_FAILURE() << "no burn rate for " << window;
  return -1;
}

bool Firing(const v1::BudgetStatus& status, const std::string& alert) {
  for (const auto& a : status.alerts()) {
    if (a.name() == alert) return a.firing();
  }
  ADD_FAILURE() << "no alert " << alert;
  return false;
}

// The review: a service with a 250 ms and a 1 s SLO counted every 500 ms
// request bad against both (the strictest threshold's good count for all):
// the 1 s SLO showed 100/100 bad and fired its alerts.
TEST(ErrorBudgetTest, EachSloCountsGoodRequestsWithinItsOwnThreshold) {
  Slo strict = MakeSlo();
  Slo lenient = MakeSlo();
  lenient.name = "latency-1s";
  lenient.threshold_ms = 1000;
  lenient.target = 0.9;
  ErrorBudgetTracker tracker({strict, lenient});
  SloWindowObservation obs = Window(1, 100, 0);
  obs.latencies.emplace();
  for (int i = 0; i < 90; ++i) ASSERT_TRUE(obs.latencies->Add(0.5).ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(obs.latencies->Add(0.1).ok());
  obs.errors = 4;  // of the fast ones, say
  tracker.Observe(obs);
  const auto statuses = tracker.Status(kNow);
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0].slo_name(), "latency");
  EXPECT_EQ(statuses[0].good(), 6);  // 10 within 250 ms, 4 failed
  EXPECT_EQ(statuses[1].slo_name(), "latency-1s");
  EXPECT_EQ(statuses[1].good(), 96);  // all within 1 s, 4 failed
  EXPECT_FALSE(statuses[1].budget_exhausted());
  // Without latencies, `good` counts for every SLO (older records).
  ErrorBudgetTracker plain({strict, lenient});
  plain.Observe(Window(1, 100, 6));
  EXPECT_EQ(plain.Status(kNow)[1].good(), 6);
}

// The review: a failure slower than the threshold was counted twice (out
// of the fast count, then again as an error): 8 % slow failures burned the
// budget at 16x where it burned at 8x.
TEST(ErrorBudgetTest, ASlowFailureCountsOnceWhenItsLatencyIsKnown) {
  SloWindowObservation obs = Window(1, 100, 0);
  obs.latencies.emplace();
  for (int i = 0; i < 92; ++i) ASSERT_TRUE(obs.latencies->Add(0.1).ok());
  for (int i = 0; i < 8; ++i) {  // slow, and failed
    ASSERT_TRUE(obs.latencies->Add(0.5).ok());
    ASSERT_TRUE(obs.error_latencies.Add(0.5).ok());
  }
  obs.errors = 8;
  ErrorBudgetTracker known({MakeSlo()});
  known.Observe(obs);
  EXPECT_EQ(known.Status(kNow)[0].good(), 92);
  EXPECT_NEAR(Burn(known.Status(kNow)[0], "5m"), 8, 1e-9);
  // Without the failures' latencies, each is taken as within the threshold:
  // the bound that counts the 8 twice (as before).
  obs.error_latencies = sli::LatencySketch();
  ErrorBudgetTracker unknown({MakeSlo()});
  unknown.Observe(obs);
  EXPECT_EQ(unknown.Status(kNow)[0].good(), 84);
  EXPECT_NEAR(Burn(unknown.Status(kNow)[0], "5m"), 16, 1e-9);
}

TEST(ErrorBudgetTest, GoodRequestsSubtractOnlyTheFailuresWithinTheThreshold) {
  sli::LatencySketch all;
  sli::LatencySketch failures;
  for (int i = 1; i <= 100; ++i) ASSERT_TRUE(all.Add(i / 100.0).ok());
  // 25 requests within 0.255 s (no value in its bucket: exact). Failures at
  // 0.05 s, 0.10 s (within 0.255 s) and 0.60 s, 0.90 s (not).
  for (double v : {0.05, 0.10, 0.60, 0.90}) {
    ASSERT_TRUE(failures.Add(v).ok());
  }
  EXPECT_EQ(GoodRequests(all, failures, 4, 0.255), 25 - 2);
  // Two more failures of unknown latency count as within it.
  EXPECT_EQ(GoodRequests(all, failures, 6, 0.255), 25 - 4);
  EXPECT_EQ(GoodRequests(all, sli::LatencySketch(), 4, 0.255), 25 - 4);
  EXPECT_EQ(GoodRequests(all, failures, 4, 10), 96);
  EXPECT_EQ(GoodRequests(all, sli::LatencySketch(), 100, 0.255), 0);  // clamped
}

TEST(ErrorBudgetTest, NoObservationsNoStatus) {
  ErrorBudgetTracker tracker({MakeSlo()});
  EXPECT_TRUE(tracker.Status(kNow).empty());
  tracker.Observe(Window(1, 100, 100));
  const auto statuses = tracker.Status(kNow);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].error_budget_remaining(), 1.0);
  EXPECT_FALSE(statuses[0].budget_exhausted());
}

TEST(ErrorBudgetTest, RemainingBudgetAndBurnRatesByHand) {
  ErrorBudgetTracker tracker({MakeSlo()});
  // 5 bad of 1000, 10 minutes ago: allowed bad = 0.01 * 1000 = 10, so half
  // the budget is left; burn rate (5 / 1000) / 0.01 = 0.5 in every lookback
  // that reaches back 10 minutes, none in the last 5 minutes.
  tracker.Observe(Window(10, 1000, 995));
  const auto statuses = tracker.Status(kNow);
  ASSERT_EQ(statuses.size(), 1u);
  const v1::BudgetStatus& s = statuses[0];
  EXPECT_EQ(s.service(), "checkout");
  EXPECT_EQ(s.slo_name(), "latency");
  EXPECT_EQ(s.group(), "canary");
  EXPECT_EQ(s.target(), 0.99);
  EXPECT_EQ(s.window_ms(), 30 * kDay);
  EXPECT_EQ(s.budgeting_method(), "Occurrences");
  EXPECT_EQ(s.as_of_ms(), kNow);
  EXPECT_EQ(s.total(), 1000);
  EXPECT_EQ(s.good(), 995);
  EXPECT_EQ(s.bad(), 5);
  EXPECT_NEAR(s.error_budget_remaining(), 0.5, 1e-12);
  EXPECT_FALSE(s.budget_exhausted());
  ASSERT_EQ(s.burn_rates_size(), 5);
  EXPECT_EQ(s.burn_rates(0).window(), "5m");
  EXPECT_EQ(s.burn_rates(0).total(), 0);
  EXPECT_EQ(Burn(s, "5m"), 0);
  EXPECT_NEAR(Burn(s, "30m"), 0.5, 1e-12);
  EXPECT_NEAR(Burn(s, "1h"), 0.5, 1e-12);
  EXPECT_NEAR(Burn(s, "6h"), 0.5, 1e-12);
  EXPECT_NEAR(Burn(s, "3d"), 0.5, 1e-12);
  EXPECT_EQ(s.burn_rates(4).window_ms(), 3 * kDay);
  for (const auto& alert : s.alerts()) EXPECT_FALSE(alert.firing());

  // 15 more bad of 500 two days ago: 20 bad of 1500 → remaining
  // 1 - 20 / 15 = -1/3, exhausted; 3d burn (20/1500)/0.01 = 4/3.
  SloWindowObservation old = Window(0, 500, 485);
  old.window_start_ms = kNow - 2 * kDay;
  old.window_end_ms = old.window_start_ms + kMinute;
  tracker.Observe(old);
  const v1::BudgetStatus s2 = tracker.Status(kNow)[0];
  EXPECT_EQ(s2.bad(), 20);
  EXPECT_NEAR(s2.error_budget_remaining(), -1.0 / 3, 1e-12);
  EXPECT_TRUE(s2.budget_exhausted());
  EXPECT_NEAR(Burn(s2, "3d"), 4.0 / 3, 1e-12);
  EXPECT_NEAR(Burn(s2, "6h"), 0.5, 1e-12);
  // ticket-slow needs 3d AND 6h above 1: 6h is 0.5.
  EXPECT_FALSE(Firing(s2, "ticket-slow"));
}

TEST(ErrorBudgetTest, LookbackHoldsWindowsStartingInIt) {
  ErrorBudgetTracker tracker({MakeSlo()});
  tracker.Observe(Window(5, 100, 90));  // starts exactly at now - 5m
  tracker.Observe(Window(0, 100, 0));   // starts at now: not yet in
  const v1::BudgetStatus s = tracker.Status(kNow)[0];
  EXPECT_EQ(s.burn_rates(0).total(), 100);
  EXPECT_NEAR(Burn(s, "5m"), 10, 1e-9);  // (10 / 100) / 0.01
  EXPECT_EQ(s.total(), 100);
  // Later, the second window counts as well.
  const v1::BudgetStatus later = tracker.Status(kNow + kMinute)[0];
  EXPECT_EQ(later.total(), 200);
  EXPECT_EQ(later.bad(), 110);
}

TEST(ErrorBudgetTest, PageNeedsBothTheHourAndTheFiveMinutes) {
  {
    // 20 % bad in the last 2 minutes: burn 20 everywhere → every alert.
    ErrorBudgetTracker tracker({MakeSlo()});
    tracker.Observe(Window(2, 100, 80));
    const v1::BudgetStatus s = tracker.Status(kNow)[0];
    EXPECT_NEAR(Burn(s, "5m"), 20, 1e-9);
    EXPECT_NEAR(Burn(s, "1h"), 20, 1e-9);
    EXPECT_TRUE(Firing(s, "page"));
    EXPECT_TRUE(Firing(s, "ticket-fast"));
    EXPECT_TRUE(Firing(s, "ticket-slow"));
    ASSERT_EQ(s.alerts_size(), 3);
    EXPECT_EQ(s.alerts(0).name(), "page");
    EXPECT_EQ(s.alerts(0).long_window(), "1h");
    EXPECT_EQ(s.alerts(0).short_window(), "5m");
    EXPECT_EQ(s.alerts(0).threshold(), 14.4);
    EXPECT_EQ(s.alerts(1).threshold(), 6.0);
    EXPECT_EQ(s.alerts(2).threshold(), 1.0);

    // 10000 good requests 40 minutes ago dilute the hour: 1h burn
    // (20 / 10100) / 0.01 = 0.198 while 5m still burns at 20 → no page.
    tracker.Observe(Window(40, 10000, 10000));
    const v1::BudgetStatus diluted = tracker.Status(kNow)[0];
    EXPECT_NEAR(Burn(diluted, "1h"), 2000.0 / 10100, 1e-9);
    EXPECT_NEAR(Burn(diluted, "5m"), 20, 1e-9);
    EXPECT_FALSE(Firing(diluted, "page"));
    EXPECT_FALSE(Firing(diluted, "ticket-fast"));
  }
  {
    // 30 bad of 100 fifty minutes ago, a clean last minute: 1h burn
    // (30 / 200) / 0.01 = 15 > 14.4 but 5m burn 0 → the page has reset;
    // 6h = 15 and 30m = 0 → no ticket-fast; 3d = 6h = 15 → ticket-slow.
    ErrorBudgetTracker tracker({MakeSlo()});
    tracker.Observe(Window(50, 100, 70));
    tracker.Observe(Window(1, 100, 100));
    const v1::BudgetStatus s = tracker.Status(kNow)[0];
    EXPECT_NEAR(Burn(s, "1h"), 15, 1e-9);
    EXPECT_EQ(Burn(s, "5m"), 0);
    EXPECT_FALSE(Firing(s, "page"));
    EXPECT_NEAR(s.alerts(0).long_burn_rate(), 15, 1e-9);
    EXPECT_FALSE(Firing(s, "ticket-fast"));
    EXPECT_TRUE(Firing(s, "ticket-slow"));
  }
  {
    // Just below the page threshold: 14 % bad → burn 14 ≤ 14.4, but > 6.
    ErrorBudgetTracker tracker({MakeSlo()});
    tracker.Observe(Window(2, 100, 86));
    const v1::BudgetStatus s = tracker.Status(kNow)[0];
    EXPECT_NEAR(Burn(s, "5m"), 14, 1e-9);
    EXPECT_FALSE(Firing(s, "page"));
    EXPECT_TRUE(Firing(s, "ticket-fast"));
  }
}

// The thresholds spend a share of the SLO's budget, so they follow its
// window: a 7-day SLO pages at 3.36 (2 % of its budget in an hour); the
// fixed 14.4 let it burn 8.6 % an hour without a page.
TEST(ErrorBudgetTest, AlertThresholdsScaleWithTheSloWindow) {
  Slo week = MakeSlo();
  week.window_ms = 7 * kDay;
  ErrorBudgetTracker tracker({week});
  tracker.Observe(Window(2, 100, 95));  // 5 % bad: burn 5
  const v1::BudgetStatus s = tracker.Status(kNow)[0];
  ASSERT_EQ(s.alerts_size(), 3);
  EXPECT_DOUBLE_EQ(s.alerts(0).threshold(), 3.36);
  EXPECT_DOUBLE_EQ(s.alerts(1).threshold(), 1.4);
  EXPECT_DOUBLE_EQ(s.alerts(2).threshold(), 1);  // 0.23, floored
  // Never below 1: a 1-day SLO burning at 0.5 ends its day with half its
  // budget left, and does not page (0.48 would have).
  Slo day = MakeSlo();
  day.window_ms = kDay;
  ErrorBudgetTracker daily({day});
  daily.Observe(Window(2, 200, 199));  // 0.5 % bad: burn 0.5
  const v1::BudgetStatus d = daily.Status(kNow)[0];
  EXPECT_DOUBLE_EQ(d.alerts(0).threshold(), 1);
  EXPECT_FALSE(Firing(d, "page"));
  EXPECT_NEAR(Burn(s, "1h"), 5, 1e-9);
  EXPECT_TRUE(Firing(s, "page"));  // 5 > 3.36; over 30 days it would not
  EXPECT_FALSE(Firing(
      [&] {
        ErrorBudgetTracker month({MakeSlo()});
        month.Observe(Window(2, 100, 95));
        return month.Status(kNow)[0];
      }(),
      "page"));
}

TEST(ErrorBudgetTest, ReplayedWindowReplacesInsteadOfDoubleCounting) {
  ErrorBudgetTracker once({MakeSlo()});
  ErrorBudgetTracker replayed({MakeSlo()});
  const auto a = Window(3, 100, 90);
  const auto b = Window(20, 50, 50);
  once.Observe(a);
  once.Observe(b);
  replayed.Observe(a);
  replayed.Observe(b);
  replayed.Observe(a);  // redelivered after a restart
  replayed.Observe(b);
  EXPECT_EQ(replayed.kept_windows(), 2u);
  const v1::BudgetStatus s1 = once.Status(kNow)[0];
  const v1::BudgetStatus s2 = replayed.Status(kNow)[0];
  EXPECT_EQ(s1.SerializeAsString(), s2.SerializeAsString());
  EXPECT_EQ(s2.total(), 150);
  EXPECT_EQ(s2.bad(), 10);

  // A corrected window replaces the first version of it.
  auto corrected = a;
  corrected.total = 120;
  corrected.good = 120;
  replayed.Observe(corrected);
  const v1::BudgetStatus s3 = replayed.Status(kNow)[0];
  EXPECT_EQ(s3.total(), 170);
  EXPECT_EQ(s3.bad(), 0);
}

TEST(ErrorBudgetTest, ArrivalOrderDoesNotMatter) {
  ErrorBudgetTracker in_order({MakeSlo()});
  ErrorBudgetTracker shuffled({MakeSlo()});
  const int minutes[] = {50, 40, 30, 20, 10, 5, 4, 3, 2, 1};
  const int shuffled_order[] = {3, 9, 0, 5, 1, 8, 2, 7, 4, 6};
  for (int m : minutes) in_order.Observe(Window(m, 100, 100 - m));
  for (int i : shuffled_order) {
    shuffled.Observe(Window(minutes[i], 100, 100 - minutes[i]));
  }
  EXPECT_EQ(shuffled.kept_windows(), 10u);
  EXPECT_EQ(in_order.Status(kNow)[0].SerializeAsString(),
            shuffled.Status(kNow)[0].SerializeAsString());
  // bad = 1+2+3+4+5 in the last 5 minutes of 500 → (15/500)/0.01 = 3.
  EXPECT_NEAR(Burn(shuffled.Status(kNow)[0], "5m"), 3, 1e-9);
}

// Ten one-minute windows in the last 10 minutes, good/total: 100/100,
// 95/100, 99/100, 100/100, 94/100, 100/100, 0/10, 97/100, 50/100, 100/100.
void ObserveTenMinutes(ErrorBudgetTracker& tracker) {
  const int64_t goods[] = {100, 95, 99, 100, 94, 100, 0, 97, 50, 100};
  const int64_t totals[] = {100, 100, 100, 100, 100, 100, 10, 100, 100, 100};
  for (int i = 0; i < 10; ++i) {
    tracker.Observe(Window(10 - i, totals[i], goods[i]));
  }
}

TEST(ErrorBudgetTest, TimeslicesCountWindowsMeetingTheSliceTarget) {
  Slo slo = MakeSlo(kTimeslices, /*target=*/0.8);
  slo.time_slice_target = 0.95;
  ErrorBudgetTracker tracker({slo});
  // Ten one-minute slices: 7 good (>= 95 % good, 95/100 included), 3 bad
  // (94/100, 0/10 and 50/100).
  ObserveTenMinutes(tracker);
  const v1::BudgetStatus s = tracker.Status(kNow)[0];
  EXPECT_EQ(s.budgeting_method(), "Timeslices");
  EXPECT_EQ(s.total(), 10);
  EXPECT_EQ(s.good(), 7);
  EXPECT_EQ(s.bad(), 3);
  // Allowed bad slices (1 - 0.8) * 10 = 2: remaining 1 - 3/2 = -0.5.
  EXPECT_NEAR(s.error_budget_remaining(), -0.5, 1e-9);
  EXPECT_TRUE(s.budget_exhausted());
  // Last 5 minutes: slices 5..9 start at 5, 4, 3, 2, 1 minutes ago;
  // bad among them: 0/10 and 50/100 → (2 / 5) / 0.2 = 2.
  EXPECT_EQ(s.burn_rates(0).total(), 5);
  EXPECT_NEAR(Burn(s, "5m"), 2, 1e-9);
  EXPECT_NEAR(Burn(s, "1h"), 1.5, 1e-9);  // (3 / 10) / 0.2

  // Without a slice target the objective's target is the slice target:
  // 94/100 >= 0.8 becomes good, 50/100 and 0/10 stay bad.
  ErrorBudgetTracker plain({MakeSlo(kTimeslices, 0.8)});
  ObserveTenMinutes(plain);
  EXPECT_EQ(plain.Status(kNow)[0].bad(), 2);
}

// timeSliceWindow: 5m over one-minute engine windows: the windows of a
// slice are one event, judged on their requests together.
TEST(ErrorBudgetTest, ATimesliceHoldsTheWindowsOfItsTimeSliceWindow) {
  Slo slo = MakeSlo(kTimeslices, /*target=*/0.8);
  slo.time_slice_target = 0.95;
  slo.time_slice_window_ms = 5 * kMinute;
  ErrorBudgetTracker tracker({slo});
  ObserveTenMinutes(tracker);
  // kNow is a multiple of 5 minutes: [-10, -5) holds 488/500 good
  // (97.6 %, a good slice), [-5, 0) 347/410 (84.6 %, bad).
  const v1::BudgetStatus s = tracker.Status(kNow)[0];
  EXPECT_EQ(s.total(), 2);
  EXPECT_EQ(s.good(), 1);
  EXPECT_EQ(s.burn_rates(0).total(), 1);  // 5m: the last slice
  EXPECT_NEAR(Burn(s, "5m"), 5, 1e-9);    // (1 / 1) / 0.2
  // Two minutes later the 5m lookback [-3, +2) still overlaps [-5, 0): a
  // slice counts in every lookback it overlaps.
  const v1::BudgetStatus later = tracker.Status(kNow + 2 * kMinute)[0];
  EXPECT_EQ(later.burn_rates(0).total(), 1);
  EXPECT_NEAR(Burn(later, "5m"), 5, 1e-9);
  EXPECT_EQ(later.total(), 2);
}

// The review: slices longer than a lookback, counted by their first
// window, left the 5m and 1h lookbacks empty most of the time — a total
// outage paged for 5 of 60 minutes with 1 h slices.
TEST(ErrorBudgetTest, ASliceLongerThanALookbackStillCountsInIt) {
  Slo slo = MakeSlo(kTimeslices, /*target=*/0.99);
  slo.time_slice_window_ms = 60 * kMinute;
  ErrorBudgetTracker tracker({slo});
  // An outage: every request bad, minute after minute through an hour that
  // began 30 minutes before kNow + 30 m.
  for (int m = 1; m <= 90; ++m) tracker.Observe(Window(m - 60, 100, 0));
  for (int minute = 0; minute < 60; ++minute) {
    const v1::BudgetStatus s = tracker.Status(kNow + minute * kMinute)[0];
    EXPECT_GE(s.burn_rates(0).total(), 1) << minute;  // 5m sees a slice
    EXPECT_TRUE(Firing(s, "page")) << minute;
  }
}

TEST(ErrorBudgetTest, GroupsAndSlosAreSeparateAndSorted) {
  Slo strict = MakeSlo();
  strict.name = "latency-strict";
  strict.target = 0.999;
  Slo other = MakeSlo();
  other.service = "search";
  ErrorBudgetTracker tracker({strict, other, MakeSlo()});
  tracker.Observe(Window(2, 1000, 999, "canary"));
  tracker.Observe(Window(2, 1000, 990, "baseline"));
  SloWindowObservation unknown = Window(2, 10, 0);
  unknown.service = "unknown-service";
  tracker.Observe(unknown);  // no SLO: ignored
  const auto statuses = tracker.Status(kNow);
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_EQ(statuses[0].slo_name(), "latency");
  EXPECT_EQ(statuses[0].group(), "baseline");
  EXPECT_NEAR(statuses[0].error_budget_remaining(), 0, 1e-9);  // 10 of 10
  EXPECT_EQ(statuses[1].slo_name(), "latency");
  EXPECT_EQ(statuses[1].group(), "canary");
  EXPECT_NEAR(statuses[1].error_budget_remaining(), 0.9, 1e-9);  // 1 of 10
  EXPECT_EQ(statuses[2].slo_name(), "latency-strict");
  EXPECT_EQ(statuses[2].group(), "baseline");
  EXPECT_NEAR(statuses[2].error_budget_remaining(), -9, 1e-9);  // 10 of 1
  EXPECT_EQ(statuses[3].group(), "canary");
  EXPECT_NEAR(statuses[3].error_budget_remaining(), 0, 1e-9);  // 1 of 1
  EXPECT_EQ(tracker.kept_windows(), 2u);
}

TEST(ErrorBudgetTest, KeepsOnlyWhatTheLongestWindowNeeds) {
  ErrorBudgetTracker tracker({MakeSlo()});
  // Forty one-day windows, 1 bad of 100 each, days 0..39.
  for (int day = 0; day < 40; ++day) {
    SloWindowObservation obs = Window(0, 100, 99);
    obs.window_start_ms = day * kDay;
    obs.window_end_ms = (day + 1) * kDay;
    tracker.Observe(obs);
  }
  // Newest end is day 40: windows starting at day 10 or later are kept.
  EXPECT_EQ(tracker.kept_windows(), 30u);
  const v1::BudgetStatus s = tracker.Status(40 * kDay)[0];
  EXPECT_EQ(s.total(), 3000);
  EXPECT_EQ(s.bad(), 30);
  EXPECT_NEAR(s.error_budget_remaining(), 0, 1e-9);
  // A window older than what is kept is ignored, not resurrected.
  SloWindowObservation stale = Window(0, 100, 0);
  stale.window_start_ms = 5 * kDay;
  stale.window_end_ms = 6 * kDay;
  tracker.Observe(stale);
  EXPECT_EQ(tracker.kept_windows(), 30u);
  EXPECT_EQ(tracker.Status(40 * kDay)[0].bad(), 30);
}

TEST(ErrorBudgetTest, IgnoresEmptyWindowsAndClampsGood) {
  ErrorBudgetTracker tracker({MakeSlo()});
  tracker.Observe(Window(1, 0, 0));
  EXPECT_EQ(tracker.kept_windows(), 0u);
  tracker.Observe(Window(1, 10, 15));
  tracker.Observe(Window(2, 10, -3));
  const v1::BudgetStatus s = tracker.Status(kNow)[0];
  EXPECT_EQ(s.good(), 10);
  EXPECT_EQ(s.bad(), 10);
}

}  // namespace
}  // namespace phaseloop::slo
