#include "common/metrics/metrics_registry.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>
#include <vector>

namespace phaseloop::metrics {
namespace {

TEST(MetricsRegistryTest, RendersTheTextExpositionFormat) {
  MetricsRegistry registry;
  Counter& closed = registry.AddCounter(
      "phaseloop_windows_closed_total", "SLI windows closed.",
      {{"service", "checkout"}, {"group", "canary"}});
  Counter& closed_baseline = registry.AddCounter(
      "phaseloop_windows_closed_total", "SLI windows closed.",
      {{"service", "checkout"}, {"group", "baseline"}});
  Gauge& lag = registry.AddGauge("phaseloop_consumer_lag",
                                 "Records behind the high watermark.");
  closed.Increment();
  closed.Increment(2);
  closed_baseline.Increment(0.5);
  lag.Set(-3);
  EXPECT_EQ(registry.RenderPrometheusText(),
            "# HELP phaseloop_consumer_lag Records behind the high "
            "watermark.\n"
            "# TYPE phaseloop_consumer_lag gauge\n"
            "phaseloop_consumer_lag -3\n"
            "# HELP phaseloop_windows_closed_total SLI windows closed.\n"
            "# TYPE phaseloop_windows_closed_total counter\n"
            "phaseloop_windows_closed_total{group=\"baseline\",service="
            "\"checkout\"} 0.5\n"
            "phaseloop_windows_closed_total{group=\"canary\",service="
            "\"checkout\"} 3\n");
}

TEST(MetricsRegistryTest, EscapesHelpAndLabelValues) {
  MetricsRegistry registry;
  registry
      .AddCounter("dead_letters_total", "Dead letters\\reasons\nper topic",
                  {{"reason", "bad \"proto\"\\n\nline"}})
      .Increment();
  EXPECT_EQ(registry.RenderPrometheusText(),
            "# HELP dead_letters_total Dead letters\\\\reasons\\nper topic\n"
            "# TYPE dead_letters_total counter\n"
            "dead_letters_total{reason=\"bad \\\"proto\\\"\\\\n\\nline\"} 1\n");
}

TEST(MetricsRegistryTest, SameSeriesIsReturnedAgain) {
  MetricsRegistry registry;
  Counter& a = registry.AddCounter("x_total", "X.", {{"k", "v"}});
  Counter& b = registry.AddCounter("x_total", "X.", {{"k", "v"}});
  EXPECT_EQ(&a, &b);
  Counter& c = registry.AddCounter("x_total", "X.", {{"k", "w"}});
  EXPECT_NE(&a, &c);
}

TEST(MetricsRegistryTest, CountersOnlyGoUp) {
  MetricsRegistry registry;
  Counter& c = registry.AddCounter("c_total", "C.");
  c.Increment(5);
  c.Increment(-2);
  c.Increment(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(c.value(), 5);
  Gauge& g = registry.AddGauge("g", "G.");
  g.Set(std::numeric_limits<double>::infinity());
  EXPECT_NE(registry.RenderPrometheusText().find("g +Inf\n"),
            std::string::npos);
  g.Set(1.25);
  g.Add(-0.5);
  EXPECT_NE(registry.RenderPrometheusText().find("g 0.75\n"),
            std::string::npos);
}

TEST(MetricsRegistryTest, ConcurrentIncrementsAreNotLost) {
  MetricsRegistry registry;
  Counter& c = registry.AddCounter("hits_total", "Hits.");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) c.Increment();
    });
  }
  // Rendering while incrementing is safe.
  for (int i = 0; i < 100; ++i) registry.RenderPrometheusText();
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 400000);
}

TEST(MetricsRegistryTest, NameRules) {
  EXPECT_TRUE(IsValidMetricName("phaseloop_lag"));
  EXPECT_TRUE(IsValidMetricName("job:rate5m"));
  EXPECT_TRUE(IsValidMetricName("_x9"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("9lives"));
  EXPECT_FALSE(IsValidMetricName("has-dash"));
  EXPECT_FALSE(IsValidMetricName("has space"));
  EXPECT_TRUE(IsValidLabelName("service"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("__reserved"));
  EXPECT_FALSE(IsValidLabelName("0x"));
}

TEST(MetricsRegistryDeathTest, BadNamesAndConflictsAbort) {
  MetricsRegistry registry;
  EXPECT_DEATH(registry.AddCounter("bad-name", "B."), "invalid metric name");
  EXPECT_DEATH(registry.AddGauge("ok", "O.", {{"__x", "1"}}),
               "invalid label name");
  registry.AddCounter("twice", "T.");
  EXPECT_DEATH(registry.AddGauge("twice", "T."), "both a counter and a gauge");
  EXPECT_DEATH(registry.AddCounter("twice", "Other."), "two help texts");
}

}  // namespace
}  // namespace phaseloop::metrics
