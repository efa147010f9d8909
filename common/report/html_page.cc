#include "common/report/html_page.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace phaseloop::report {
namespace {

// Nothing may be fetched: no default source, and inline style and script
// only (images only as data: URLs).
constexpr char kContentPolicy[] =
    "default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'unsafe-inline'; img-src data:";

constexpr char kHouseCss[] =
    "body{font-family:sans-serif;margin:2em;max-width:60em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "th{background:#f4f4f4}.pl-none{color:#888}"
    "svg.pl-chart{display:block;margin:.5em 0;font-size:11px}"
    "svg.pl-chart text{fill:#333}";

// The in-browser check (see html_page.h for what it writes).
constexpr char kChartCheck[] = R"JS((function () {
  function area(r) { return r.width * r.height; }
  function whyNotDrawn(chart) {
    var box = chart.getBoundingClientRect();
    if (!(area(box) > 0)) return "the chart has no area on the page";
    var want = Number(chart.getAttribute("data-marks"));
    if (!(want > 0)) return "the chart says nothing about its marks (data-marks)";
    var marks = chart.querySelectorAll(".pl-mark");
    if (marks.length !== want) {
      return marks.length + " marks in the page, " + want + " expected";
    }
    for (var i = 0; i < marks.length; ++i) {
      var r = marks[i].getBoundingClientRect();
      if (!(area(r) > 0) || getComputedStyle(marks[i]).visibility !== "visible") {
        return "mark " + (i + 1) + " of " + want + " is not visible";
      }
      if (r.left < box.left - 1 || r.right > box.right + 1 ||
          r.top < box.top - 1 || r.bottom > box.bottom + 1) {
        return "mark " + (i + 1) + " of " + want + " lies outside the chart";
      }
    }
    return "";
  }
  function check() {
    var charts = document.querySelectorAll("svg.pl-chart");
    var drawn = 0, notes = [];
    for (var i = 0; i < charts.length; ++i) {
      var why = whyNotDrawn(charts[i]);
      charts[i].setAttribute("data-drawn", why ? "no" : "yes");
      if (why) {
        notes.push("chart " + (i + 1) + " (" +
                   (charts[i].getAttribute("aria-label") || "unnamed") +
                   "): " + why);
      } else {
        ++drawn;
      }
    }
    var fetched = performance.getEntriesByType("resource");
    for (var j = 0; j < fetched.length; ++j) {
      notes.push("asked for " + fetched[j].name);
    }
    document.getElementById("pl-chart-check").textContent = notes.join("\n");
    document.body.setAttribute("data-resources-fetched", fetched.length);
    document.body.setAttribute("data-charts-expected", charts.length);
    document.body.setAttribute("data-charts-drawn", drawn);
  }
  addEventListener("load", function () {
    try { check(); } catch (e) {
      document.body.setAttribute("data-charts-error", String(e));
    }
  });
})();)JS";

}  // namespace

std::string EscapeHtml(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"},
                                    {"<", "&lt;"},
                                    {">", "&gt;"},
                                    {"\"", "&quot;"},
                                    {"'", "&#39;"}});
}

std::string HtmlPage(absl::string_view title, absl::string_view body_html,
                     absl::string_view extra_css) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"",
      kContentPolicy, "\">\n<title>", EscapeHtml(title), "</title>\n<style>",
      kHouseCss, extra_css, "</style></head><body>\n", body_html,
      "\n<pre id=\"pl-chart-check\" hidden></pre>\n<script>", kChartCheck,
      "</script>\n</body></html>\n");
}

}  // namespace phaseloop::report
