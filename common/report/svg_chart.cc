#include "common/report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/report/html_page.h"

namespace phaseloop::report {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                    "#d62728", "#9467bd", "#8c564b"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
// Room around the plot: y ticks on the left, x ticks and label below, the
// legend above.
constexpr int kLeft = 64, kRight = 12, kBottom = 36;

// A y axis from lo to hi in steps of 1, 2, 2.5 or 5 times a power of ten,
// always including 0.
struct Axis {
  double lo = 0, hi = 1, step = 1;
  int decimals = 0;
};

Axis NiceAxis(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / 4;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  Axis axis;
  axis.step = 10 * power;
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * power >= raw) {
      axis.step = m * power;
      break;
    }
  }
  axis.lo = std::floor(lo / axis.step + 1e-9) * axis.step;
  axis.hi = std::ceil(hi / axis.step - 1e-9) * axis.step;
  while (axis.decimals < 9) {
    const double scaled = axis.step * std::pow(10, axis.decimals);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * scaled) break;
    ++axis.decimals;
  }
  return axis;
}

struct Plot {
  double left, top, width, height;
  Axis axis;
  double Y(double v) const {
    return top + height * (axis.hi - v) / (axis.hi - axis.lo);
  }
  double Bottom() const { return top + height; }
};

std::string WithUnit(double value, int decimals, const std::string& unit) {
  const std::string text = absl::StrFormat("%.*f", decimals, value);
  return unit.empty() ? text : absl::StrCat(text, " ", unit);
}

std::string Tooltip(absl::string_view what, double value,
                    const std::string& unit) {
  return EscapeHtml(absl::StrCat(what, ": ", absl::StrFormat("%.4g", value),
                                 unit.empty() ? "" : " ", unit));
}

std::string OpenSvg(const std::string& title, int width, int height,
                    int marks) {
  return absl::StrFormat(
      "<svg class=\"pl-chart\" data-marks=\"%d\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\"><title>%s"
      "</title>",
      marks, width, height, width, height, EscapeHtml(title),
      EscapeHtml(title));
}

// Grid lines and labels at every tick, the y axis and the zero line.
std::string YAxis(const Plot& plot, const std::string& unit) {
  std::string svg;
  const double right = plot.left + plot.width;
  const Axis& axis = plot.axis;
  const int ticks =
      static_cast<int>(std::round((axis.hi - axis.lo) / axis.step));
  for (int k = 0; k <= ticks; ++k) {
    double v = axis.lo + k * axis.step;
    if (std::abs(v) < axis.step / 2) v = 0;  // no "-0.00"
    const double y = plot.Y(v);
    absl::StrAppendFormat(
        &svg,
        "<line class=\"pl-grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
        "y2=\"%.1f\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" "
        "text-anchor=\"end\">%s</text>",
        plot.left, y, right, y, v == 0 ? "#999" : "#eee", plot.left - 4, y + 4,
        EscapeHtml(WithUnit(v, axis.decimals, unit)));
  }
  absl::StrAppendFormat(&svg,
                        "<line class=\"pl-axis\" x1=\"%.1f\" y1=\"%.1f\" "
                        "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>",
                        plot.left, plot.top, plot.left, plot.Bottom());
  return svg;
}

std::string Legend(const std::vector<std::string>& names,
                   const std::vector<std::string>& colours, double left) {
  std::string svg;
  double x = left;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StrAppendFormat(
        &svg,
        "<rect class=\"pl-legend\" x=\"%.1f\" y=\"6\" width=\"10\" "
        "height=\"10\" fill=\"%s\"/><text x=\"%.1f\" y=\"15\">%s</text>",
        x, EscapeHtml(colours[i]), x + 14, EscapeHtml(names[i]));
    x += 14 + 7 * names[i].size() + 16;
  }
  return svg;
}

std::string NoData(const std::string& title) {
  return absl::StrCat("<p class=\"pl-none\">", EscapeHtml(title),
                      ": no data</p>");
}

}  // namespace

std::string LineChartSvg(const LineChart& chart) {
  size_t n = 0;
  int marks = 0;
  double lo = 0, hi = 0;
  for (const auto& series : chart.series) {
    n = std::max(n, series.values.size());
    for (double v : series.values) {
      if (!std::isfinite(v)) continue;
      ++marks;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (marks == 0) return NoData(chart.title);
  constexpr int kTop = 26;
  const Plot plot{kLeft, kTop, double(chart.width - kLeft - kRight),
                  double(chart.height - kTop - kBottom), NiceAxis(lo, hi)};
  auto x = [&](size_t i) {
    return plot.left + (n == 1 ? plot.width / 2 : plot.width * i / (n - 1));
  };
  auto tick = [&](size_t i) {
    return i < chart.x_ticks.size() ? chart.x_ticks[i] : absl::StrCat(i + 1);
  };
  std::string svg = OpenSvg(chart.title, chart.width, chart.height, marks);
  svg += YAxis(plot, chart.y_unit);
  const size_t stride = std::max<size_t>(1, (n + 7) / 8);
  for (size_t i = 0; i < n; i += stride) {
    absl::StrAppendFormat(
        &svg, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
        x(i), plot.Bottom() + 14, EscapeHtml(tick(i)));
  }
  absl::StrAppendFormat(
      &svg, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
      plot.left + plot.width / 2, chart.height - 4, EscapeHtml(chart.x_label));
  std::vector<std::string> names, colours;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const Series& series = chart.series[s];
    const std::string colour =
        series.colour.empty() ? kPalette[s % kPaletteSize] : series.colour;
    names.push_back(series.name);
    colours.push_back(colour);
    std::vector<std::string> points;
    std::string dots;
    for (size_t i = 0; i < series.values.size(); ++i) {
      const double v = series.values[i];
      if (!std::isfinite(v)) continue;
      points.push_back(absl::StrFormat("%.1f,%.1f", x(i), plot.Y(v)));
      absl::StrAppendFormat(
          &dots,
          "<circle class=\"pl-mark\" data-series=\"%s\" cx=\"%.1f\" "
          "cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s</title></circle>",
          EscapeHtml(series.name), x(i), plot.Y(v), EscapeHtml(colour),
          Tooltip(absl::StrCat(series.name, ", ", tick(i)), v, chart.y_unit));
    }
    if (points.size() >= 2) {
      absl::StrAppendFormat(
          &svg,
          "<polyline class=\"pl-line\" data-series=\"%s\" fill=\"none\" "
          "stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>",
          EscapeHtml(series.name), EscapeHtml(colour),
          absl::StrJoin(points, " "));
    }
    svg += dots;
  }
  svg += Legend(names, colours, plot.left);
  svg += "</svg>";
  return svg;
}

std::string BarChartSvg(const BarChart& chart) {
  int marks = 0;
  double lo = 0, hi = 0;
  for (const auto& bar : chart.bars) {
    if (!std::isfinite(bar.value)) continue;
    ++marks;
    lo = std::min(lo, bar.value);
    hi = std::max(hi, bar.value);
  }
  if (marks == 0) return NoData(chart.title);
  constexpr int kTop = 10, kGap = 10;
  const int width =
      kLeft + static_cast<int>(chart.bars.size()) * (chart.bar_width + kGap) +
      kRight;
  const Plot plot{kLeft, kTop, double(width - kLeft - kRight),
                  double(chart.height - kTop - kBottom), NiceAxis(lo, hi)};
  std::string svg = OpenSvg(chart.title, width, chart.height, marks);
  svg += YAxis(plot, chart.y_unit);
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& bar = chart.bars[i];
    const double left = plot.left + kGap / 2 + i * (chart.bar_width + kGap);
    absl::StrAppendFormat(
        &svg, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
        left + chart.bar_width / 2.0, plot.Bottom() + 14,
        EscapeHtml(bar.label));
    if (!std::isfinite(bar.value)) continue;
    const double top = std::min(plot.Y(bar.value), plot.Y(0));
    const double h = std::max(1.0, std::abs(plot.Y(bar.value) - plot.Y(0)));
    absl::StrAppendFormat(
        &svg,
        "<rect class=\"pl-mark\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" "
        "height=\"%.1f\" fill=\"%s\"><title>%s</title></rect>",
        left, top, chart.bar_width, h,
        EscapeHtml(bar.colour.empty() ? kPalette[0] : bar.colour),
        bar.tooltip.empty() ? Tooltip(bar.label, bar.value, chart.y_unit)
                            : EscapeHtml(bar.tooltip));
  }
  svg += "</svg>";
  return svg;
}

}  // namespace phaseloop::report
