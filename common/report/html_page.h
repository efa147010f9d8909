#ifndef PHASELOOP_COMMON_REPORT_HTML_PAGE_H_
#define PHASELOOP_COMMON_REPORT_HTML_PAGE_H_

// The shell every phaseloop HTML report shares: one self-contained page that
// needs no network at view time (its style and its one script are inline,
// its charts inline SVG from svg_chart.h, and its Content-Security-Policy
// forbids fetching anything), with the house CSS and a check that runs in
// the browser.
//
// The check: after `load`, the page measures every `<svg class="pl-chart">`
// as the browser laid it out. A chart drew when its box has an area, it
// holds exactly `data-marks` marks (elements of class `pl-mark`: points,
// bars), and every mark has an area and lies inside the chart's box. The
// page writes what it found into its own DOM, so a headless browser's DOM
// dump proves the charts drew (tools/check_report.sh reads it):
//   <body data-charts-expected="N" data-charts-drawn="M"
//         data-resources-fetched="K">   (K: resources the page asked for,
//                                          blocked or not)
//   each chart: data-drawn="yes" or "no"
//   <pre id="pl-chart-check" hidden>: one line per chart that did not draw,
//   saying why, and per resource asked for; a script error goes to
//   <body data-charts-error="...">.

#include <string>

#include "absl/strings/string_view.h"

namespace phaseloop::report {

// `text` made safe as HTML element content or a double-quoted attribute
// value (& < > " ').
std::string EscapeHtml(absl::string_view text);

// A whole page: doctype, head (charset, title, the policy that forbids any
// fetch, the house CSS followed by `extra_css`), `body_html` as given (the
// caller escapes what it puts there), then the chart check. Deterministic.
std::string HtmlPage(absl::string_view title, absl::string_view body_html,
                     absl::string_view extra_css = "");

}  // namespace phaseloop::report

#endif  // PHASELOOP_COMMON_REPORT_HTML_PAGE_H_
