#ifndef PHASELOOP_COMMON_REPORT_SVG_CHART_H_
#define PHASELOOP_COMMON_REPORT_SVG_CHART_H_

// Line and bar charts as inline SVG for the self-contained HTML reports
// (html_page.h): axes with rounded ticks and the unit, an x-axis label, a
// legend, every text escaped.
//
// Each chart is `<svg class="pl-chart" data-marks="N" ...>`, where N is the
// number of marks it draws (class `pl-mark`: a point of a line chart, a bar
// of a bar chart); the page's in-browser check compares what the browser
// laid out against N (tools/check_report.sh). A value that is not finite is
// neither drawn nor counted; a chart with nothing to draw comes out as
// `<p class="pl-none">TITLE: no data</p>` instead of an empty chart.
// Pure functions: the same chart gives the same bytes.

#include <string>
#include <vector>

namespace phaseloop::report {

struct Series {
  std::string name;            // in the legend and each point's tooltip
  std::vector<double> values;  // one per x position, from the first
  std::string colour;          // CSS colour; empty: the house palette's next
};

struct LineChart {
  std::string title;    // the chart's accessible name
  std::string x_label;  // under the x axis, e.g. "reward window"
  std::string y_unit;   // after each y tick, e.g. "ms"; may be empty
  // The label of each x position; where absent, positions count from 1.
  std::vector<std::string> x_ticks;
  std::vector<Series> series;
  int width = 560;
  int height = 200;
};

// One polyline per series (class `pl-line`, `data-series` its name) and a
// point per finite value (`pl-mark`).
std::string LineChartSvg(const LineChart& chart);

struct Bar {
  std::string label;    // under the bar
  double value = 0;     // bars grow from 0, up or down
  std::string colour;   // CSS colour; empty: the palette's first
  std::string tooltip;  // shown on hover; empty: "label: value unit"
};

struct BarChart {
  std::string title;
  std::string y_unit;
  std::vector<Bar> bars;
  int bar_width = 70;  // the chart is as wide as its bars need
  int height = 150;
};

// A bar per finite value (`pl-mark`); a bar of value 0 is drawn one pixel
// high so that every data point shows.
std::string BarChartSvg(const BarChart& chart);

}  // namespace phaseloop::report

#endif  // PHASELOOP_COMMON_REPORT_SVG_CHART_H_
