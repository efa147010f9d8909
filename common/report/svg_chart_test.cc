#include "common/report/svg_chart.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::report {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// Every value of attribute `name` (e.g. " cy=\"") in `svg`, as numbers.
std::vector<double> Numbers(const std::string& svg, const std::string& name) {
  std::vector<double> out;
  for (size_t at = svg.find(name); at != std::string::npos;
       at = svg.find(name, at + 1)) {
    out.push_back(std::stod(svg.substr(at + name.size())));
  }
  return out;
}

LineChart TwoSides() {
  LineChart chart;
  chart.title = "p95 per window";
  chart.x_label = "reward window";
  chart.y_unit = "ms";
  chart.series = {{"baseline", {1.0, 1.1, 0.9}, ""},
                  {"canary", {1.5, std::nan(""), 1.6, 1.4}, "#ff7f0e"}};
  return chart;
}

TEST(LineChartTest, DrawsAPointPerFiniteValueAndSaysHowMany) {
  const std::string svg = LineChartSvg(TwoSides());
  EXPECT_EQ(svg.rfind("<svg class=\"pl-chart\" data-marks=\"6\"", 0), 0u);
  EXPECT_EQ(Count(svg, "class=\"pl-mark\""), 6u);
  EXPECT_EQ(Count(svg, "<circle class=\"pl-mark\" data-series=\"canary\""), 3u);
  EXPECT_EQ(Count(svg, "<polyline class=\"pl-line\""), 2u);
  EXPECT_NE(svg.find("aria-label=\"p95 per window\""), std::string::npos);
  EXPECT_NE(svg.find(">reward window</text>"), std::string::npos);
  // Legend: a swatch and a name per series, in the series' colour.
  EXPECT_EQ(Count(svg, "class=\"pl-legend\""), 2u);
  EXPECT_NE(svg.find("fill=\"#ff7f0e\"/><text x=\"164.0\" y=\"15\">canary"),
            std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg, LineChartSvg(TwoSides()));  // same chart, same bytes
}

TEST(LineChartTest, YTicksAreRoundNumbersWithTheUnitCoveringTheData) {
  const std::string svg = LineChartSvg(TwoSides());
  for (const char* tick :
       {">0.0 ms<", ">0.5 ms<", ">1.0 ms<", ">1.5 ms<", ">2.0 ms<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick << "\n" << svg;
  }
  EXPECT_EQ(svg.find(">2.5 ms<"), std::string::npos);
  // Every point lies inside the plot (y from 26 to 200 - 36).
  for (double cy : Numbers(svg, " cy=\"")) {
    EXPECT_GE(cy, 26);
    EXPECT_LE(cy, 164);
  }
  for (double cx : Numbers(svg, " cx=\"")) {
    EXPECT_GE(cx, 64);
    EXPECT_LE(cx, 548);
  }
}

TEST(LineChartTest, NegativeValuesGetAnAxisBelowZero) {
  LineChart chart;
  chart.title = "reward";
  chart.x_ticks = {"it 1", "it 2"};
  chart.series = {{"reward", {-0.3, 0.1}, ""}};
  const std::string svg = LineChartSvg(chart);
  EXPECT_NE(svg.find(">-0.3<"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">0.0<"), std::string::npos);
  EXPECT_EQ(svg.find(">-0.0<"), std::string::npos);
  EXPECT_NE(svg.find(">it 2</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>reward, it 1: -0.3</title>"), std::string::npos);
}

TEST(LineChartTest, EscapesEveryText) {
  LineChart chart;
  chart.title = "a<b>";
  chart.x_label = "x & y";
  chart.y_unit = "\"u\"";
  chart.series = {{"<script>", {1}, "red\"/><script>"}};
  const std::string svg = LineChartSvg(chart);
  EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("x &amp; y"), std::string::npos);
  EXPECT_NE(svg.find("&quot;u&quot;"), std::string::npos);
}

TEST(LineChartTest, NothingToDrawIsSaidNotDrawn) {
  LineChart chart;
  chart.title = "p95 <step 1>";
  EXPECT_EQ(LineChartSvg(chart),
            "<p class=\"pl-none\">p95 &lt;step 1&gt;: no data</p>");
  chart.series = {{"a", {std::numeric_limits<double>::infinity()}, ""}};
  EXPECT_EQ(LineChartSvg(chart).find("<svg"), std::string::npos);
}

TEST(BarChartTest, DrawsEveryBarFromZeroEvenAZeroOne) {
  BarChart chart;
  chart.title = "traffic";
  chart.y_unit = "%";
  chart.bars = {{"5 % Pass", 5, "#2ca02c", "step 1: Pass"},
                {"0 %", 0, "", ""},
                {"-10 %", -10, "", ""}};
  const std::string svg = BarChartSvg(chart);
  EXPECT_EQ(svg.rfind("<svg class=\"pl-chart\" data-marks=\"3\"", 0), 0u);
  EXPECT_EQ(Count(svg, "<rect class=\"pl-mark\""), 3u);
  // Width: three bars of 70 with gaps of 10 between the margins.
  EXPECT_NE(svg.find("width=\"316\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>step 1: Pass</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>-10 %: -10 %</title>"), std::string::npos);
  // The svg's own height comes first; then one per bar.
  const std::vector<double> bar_heights = Numbers(svg, "\" height=\"");
  ASSERT_EQ(bar_heights.size(), 4u);
  EXPECT_GT(bar_heights[1], 1.0);
  EXPECT_EQ(bar_heights[2], 1.0);  // the zero bar still shows
  EXPECT_GT(bar_heights[3], 1.0);
  EXPECT_NE(svg.find(">-10 %<"), std::string::npos);  // axis below zero
}

TEST(BarChartTest, NoFiniteValueIsNoData) {
  BarChart chart;
  chart.title = "traffic";
  EXPECT_EQ(BarChartSvg(chart), "<p class=\"pl-none\">traffic: no data</p>");
}

}  // namespace
}  // namespace phaseloop::report
