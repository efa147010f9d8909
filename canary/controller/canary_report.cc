#include "canary/controller/canary_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "common/files/atomic_file.h"

namespace phaseloop::canary {
namespace {

constexpr char kBaselineColour[] = "#1f77b4";
constexpr char kCanaryColour[] = "#ff7f0e";

std::string Escape(const std::string& text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

std::string Utc(int64_t ms) {
  if (ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(ms),
                          absl::UTCTimeZone());
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Per-window p95 of both sides as two polylines with points.
std::string StepChart(const v1::CanaryStepResult& step) {
  constexpr int kWidth = 560, kHeight = 180, kLeft = 50, kBottom = 24;
  const int n =
      std::max(step.baseline_p95_ms_size(), step.canary_p95_ms_size());
  if (n == 0) {
    return "<p class=\"none\">no reward windows were read for this step</p>";
  }
  double top = 0;
  for (double v : step.baseline_p95_ms()) top = std::max(top, v);
  for (double v : step.canary_p95_ms()) top = std::max(top, v);
  top = top > 0 ? top * 1.1 : 1;
  const double plot_w = kWidth - kLeft - 10, plot_h = kHeight - kBottom - 10;
  auto x = [&](int i) {
    return kLeft + (n == 1 ? plot_w / 2 : plot_w * i / (n - 1));
  };
  auto y = [&](double v) { return 10 + plot_h * (1 - v / top); };
  std::string svg = absl::StrFormat(
      "<svg class=\"chart\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"p95 per window, step "
      "%d\">",
      kWidth, kHeight, kWidth, kHeight, step.index() + 1);
  absl::StrAppendFormat(
      &svg,
      "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999\"/>"
      "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#999\"/>"
      "<text x=\"4\" y=\"16\" font-size=\"11\">%.2f ms</text>"
      "<text x=\"4\" y=\"%.1f\" font-size=\"11\">0</text>"
      "<text x=\"%d\" y=\"%d\" font-size=\"11\">reward window</text>",
      kLeft, kLeft, 10 + plot_h, kLeft, 10 + plot_h, kWidth - 10, 10 + plot_h,
      top, 10 + plot_h, kWidth / 2 - 30, kHeight - 6);
  auto series = [&](const auto& values, const char* colour, const char* name) {
    std::string points;
    std::string dots;
    for (int i = 0; i < values.size(); ++i) {
      absl::StrAppendFormat(&points, "%.1f,%.1f ", x(i), y(values[i]));
      absl::StrAppendFormat(&dots,
                            "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" "
                            "r=\"2.5\" fill=\"%s\"/>",
                            name, x(i), y(values[i]), colour);
    }
    return absl::StrFormat(
        "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" "
        "stroke-width=\"1.5\" points=\"%s\"/>%s",
        name, colour, points, dots);
  };
  svg += series(step.baseline_p95_ms(), kBaselineColour, "baseline");
  svg += series(step.canary_p95_ms(), kCanaryColour, "canary");
  svg += "</svg>";
  return svg;
}

// The traffic plan: one bar per step, its height the canary's share,
// coloured by the step's outcome.
std::string TrafficChart(const v1::CanaryRun& run) {
  constexpr int kBar = 70, kHeight = 110;
  const int width = std::max(1, run.plan_size()) * (kBar + 10) + 10;
  std::string svg = absl::StrFormat(
      "<svg class=\"chart\" width=\"%d\" height=\"%d\" role=\"img\" "
      "aria-label=\"canary traffic per step\">",
      width, kHeight + 30);
  for (int i = 0; i < run.plan_size(); ++i) {
    const double weight = run.plan(i).canary_weight();
    std::string outcome = "not run";
    for (const auto& step : run.steps()) {
      if (step.index() == i) outcome = step.outcome();
    }
    const char* colour = outcome == "Pass"      ? "#2ca02c"
                         : outcome == "Fail"    ? "#d62728"
                         : outcome == "not run" ? "#cccccc"
                                                : "#bcbd22";
    const double h = kHeight * weight / 0.5;
    absl::StrAppendFormat(
        &svg,
        "<rect class=\"step\" x=\"%d\" y=\"%.1f\" width=\"%d\" "
        "height=\"%.1f\" fill=\"%s\"><title>step %d: %s</title></rect>"
        "<text x=\"%d\" y=\"%d\" font-size=\"11\">%.0f %% %s</text>",
        10 + i * (kBar + 10), kHeight - h + 4, kBar, h, colour, i + 1,
        Escape(outcome), 10 + i * (kBar + 10), kHeight + 20, 100 * weight,
        Escape(outcome));
  }
  svg += "</svg>";
  return svg;
}

}  // namespace

std::string CanaryRunsTable(const std::vector<v1::CanaryRun>& runs) {
  if (runs.empty()) {
    return "no canary runs yet (phaseloop canary run starts one)\n";
  }
  std::string table = absl::StrFormat("%-24s %-12s %-18s %-12s %5s %8s  %s\n",
                                      "canary", "service", "candidate", "phase",
                                      "steps", "reward", "started (UTC)");
  for (const auto& run : runs) {
    absl::StrAppendFormat(
        &table, "%-24s %-12s %-18s %-12s %2d/%-2d %8s  %s\n", run.canary_id(),
        run.service(), run.candidate_version().substr(0, 18), run.phase(),
        run.steps_size(), run.plan_size(),
        run.has_final_reward() ? absl::StrFormat("%+.4f", run.final_reward())
                               : std::string("-"),
        Utc(run.created_ms()));
  }
  return table;
}

std::string CanaryReportHtml(const v1::CanaryRun& run) {
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>canary ",
      Escape(run.canary_id()),
      "</title><style>body{font-family:sans-serif;margin:2em;max-width:"
      "60em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
      "padding:3px 8px;text-align:right}th{background:#f4f4f4}"
      ".Pass{color:#2ca02c}.Fail{color:#d62728}.none{color:#888}"
      ".legend span{display:inline-block;width:1em;height:.6em;margin:0 "
      ".3em 0 1em}</style></head><body>\n");
  absl::StrAppendFormat(
      &html,
      "<h1>Canary %s: <span class=\"%s\">%s</span></h1>\n"
      "<p>service <b>%s</b>, candidate <b>%s</b> against stable <b>%s</b>; "
      "started %s UTC, ended %s UTC; resumed %d time(s).</p>\n",
      Escape(run.canary_id()),
      Escape(run.phase() == "promoted"      ? "Pass"
             : run.phase() == "rolled_back" ? "Fail"
                                            : ""),
      Escape(run.phase()), Escape(run.service()),
      Escape(run.candidate_version()), Escape(run.stable_version()),
      Utc(run.created_ms()), Utc(run.ended_ms()), run.resumes());
  html += "<h2>Why</h2><ul>";
  for (const auto& reason : run.final_reasons()) {
    absl::StrAppend(&html, "<li>", Escape(reason), "</li>");
  }
  if (run.final_reasons().empty()) html += "<li>still running</li>";
  html += "</ul>\n";
  absl::StrAppendFormat(
      &html,
      "<h2>Reward and error budget</h2><p>final reward: <b>%s</b> "
      "(replay buffer, source canary). Error budget tier <b>%s</b>; budget "
      "remaining %s at the start, %s at the end.</p><ul>",
      run.has_final_reward() ? absl::StrFormat("%+.4f", run.final_reward())
                             : std::string("none"),
      Escape(run.budget_tier().empty() ? "-" : run.budget_tier()),
      run.has_budget_remaining_at_start()
          ? absl::StrFormat("%.1f %%", 100 * run.budget_remaining_at_start())
          : std::string("unknown"),
      run.has_budget_remaining_at_end()
          ? absl::StrFormat("%.1f %%", 100 * run.budget_remaining_at_end())
          : std::string("unknown"));
  for (const auto& reason : run.budget_reasons()) {
    absl::StrAppend(&html, "<li>", Escape(reason), "</li>");
  }
  html += "</ul>\n<h2>Traffic</h2>\n" + TrafficChart(run);
  html +=
      "\n<h2>Steps</h2><table><tr><th>step</th><th>canary share</th>"
      "<th>outcome</th><th>score</th><th>windows b/c</th><th>p95 baseline "
      "(median, ms)</th><th>p95 canary (median, ms)</th><th>relative "
      "reward</th><th>extended</th></tr>\n";
  for (const auto& step : run.steps()) {
    absl::StrAppendFormat(
        &html,
        "<tr><td>%d</td><td>%.0f %%</td><td class=\"%s\">%s</td>"
        "<td>%.0f</td><td>%d/%d</td><td>%.3f</td><td>%.3f</td>"
        "<td>%+.4f</td><td>%d</td></tr>\n",
        step.index() + 1, 100 * step.canary_weight(), Escape(step.outcome()),
        Escape(step.outcome()), step.score(), step.baseline_windows(),
        step.canary_windows(),
        Median({step.baseline_p95_ms().begin(), step.baseline_p95_ms().end()}),
        Median({step.canary_p95_ms().begin(), step.canary_p95_ms().end()}),
        step.relative_reward(), step.extensions());
  }
  html += "</table>\n";
  for (const auto& step : run.steps()) {
    absl::StrAppendFormat(
        &html,
        "<h3>Step %d: %s</h3><p class=\"legend\"><span style=\"background:"
        "%s\"></span>baseline<span style=\"background:%s\"></span>canary "
        "(p95 per reward window, judged from %s to %s UTC)</p>\n",
        step.index() + 1, Escape(step.outcome()), kBaselineColour,
        kCanaryColour, Utc(step.judged_from_ms()), Utc(step.judged_to_ms()));
    html += StepChart(step);
    html +=
        "<table><tr><th>metric</th><th>outcome</th><th>n baseline</th><th>n "
        "canary</th><th>median baseline</th><th>median canary</th><th>ratio"
        "</th><th>p (Mann-Whitney)</th><th>reason</th></tr>";
    for (const auto& metric : step.metrics()) {
      absl::StrAppendFormat(
          &html,
          "<tr><td>%s</td><td class=\"%s\">%s</td><td>%d</td><td>%d</td>"
          "<td>%.4g</td><td>%.4g</td><td>%.4f</td><td>%.4g</td>"
          "<td style=\"text-align:left\">%s</td></tr>",
          Escape(metric.name()), Escape(metric.outcome()),
          Escape(metric.outcome()), metric.baseline_count(),
          metric.canary_count(), metric.baseline_median(),
          metric.canary_median(), metric.ratio(), metric.p_value(),
          Escape(metric.reason()));
    }
    html += "</table>\n<ul>";
    for (const auto& reason : step.reasons()) {
      absl::StrAppend(&html, "<li>", Escape(reason), "</li>");
    }
    html += "</ul>\n";
  }
  html += "</body></html>\n";
  return html;
}

absl::StatusOr<std::string> WriteCanaryReport(const CanaryStateStore& store,
                                              const v1::CanaryRun& run) {
  const std::string dir = store.RunDir(run.canary_id());
  if (auto s = files::MakeDirectories(dir); !s.ok()) return s;
  const std::string html = dir + "/report.html";
  if (auto s = files::WriteFileAtomically(html, CanaryReportHtml(run));
      !s.ok()) {
    return s;
  }
  if (auto s = files::WriteFileAtomically(dir + "/report.json",
                                          CanaryRunToJson(run));
      !s.ok()) {
    return s;
  }
  return html;
}

}  // namespace phaseloop::canary
