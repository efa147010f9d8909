#include "canary/controller/canary_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "canary/controller/step_figures.h"
#include "common/files/atomic_file.h"
#include "common/report/html_page.h"
#include "common/report/svg_chart.h"

namespace phaseloop::canary {
namespace {

constexpr char kBaselineColour[] = "#1f77b4";
constexpr char kCanaryColour[] = "#ff7f0e";

using report::EscapeHtml;

std::string Utc(int64_t ms) {
  if (ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(ms),
                          absl::UTCTimeZone());
}

// Per-window p95 of both sides, a line each.
std::string StepChart(const v1::CanaryStepResult& step) {
  if (step.baseline_p95_ms().empty() && step.canary_p95_ms().empty()) {
    return "<p class=\"pl-none\">no reward windows were read for this "
           "step</p>";
  }
  report::LineChart chart;
  chart.title = absl::StrCat("p95 per window, step ", step.index() + 1);
  chart.x_label = "reward window";
  chart.y_unit = "ms";
  chart.series = {
      {"baseline",
       {step.baseline_p95_ms().begin(), step.baseline_p95_ms().end()},
       kBaselineColour},
      {"canary",
       {step.canary_p95_ms().begin(), step.canary_p95_ms().end()},
       kCanaryColour}};
  return report::LineChartSvg(chart);
}

// The traffic plan: one bar per step, its height the canary's share,
// coloured by the step's outcome.
std::string TrafficChart(const v1::CanaryRun& run) {
  report::BarChart chart;
  chart.title = "canary traffic per step";
  chart.y_unit = "%";
  for (int i = 0; i < run.plan_size(); ++i) {
    const double percent = 100 * run.plan(i).canary_weight();
    std::string outcome = "not run";
    for (const auto& step : run.steps()) {
      if (step.index() == i) outcome = step.outcome();
    }
    const char* colour = outcome == "Pass"      ? "#2ca02c"
                         : outcome == "Fail"    ? "#d62728"
                         : outcome == "not run" ? "#cccccc"
                                                : "#bcbd22";
    chart.bars.push_back({absl::StrFormat("%.0f %% %s", percent, outcome),
                          percent, colour,
                          absl::StrFormat("step %d: %s", i + 1, outcome)});
  }
  return report::BarChartSvg(chart);
}

}  // namespace

std::string CanaryRunsTable(const std::vector<v1::CanaryRun>& runs,
                            const std::set<std::string>& stopped) {
  if (runs.empty()) {
    return "no canary runs yet (phaseloop canary run starts one)\n";
  }
  std::string table = absl::StrFormat("%-24s %-12s %-18s %-20s %5s %8s  %s\n",
                                      "canary", "service", "candidate", "phase",
                                      "steps", "reward", "started (UTC)");
  for (const auto& run : runs) {
    absl::StrAppendFormat(
        &table, "%-24s %-12s %-18s %-20s %2d/%-2d %8s  %s\n", run.canary_id(),
        run.service(), run.candidate_version().substr(0, 18),
        stopped.count(run.canary_id()) > 0 ? "stopped: " + run.phase()
                                           : run.phase(),
        run.steps_size(), run.plan_size(),
        run.has_final_reward() ? absl::StrFormat("%+.4f", run.final_reward())
                               : std::string("-"),
        Utc(run.created_ms()));
  }
  return table;
}

std::string CanaryReportHtml(const v1::CanaryRun& run) {
  std::string html;
  absl::StrAppendFormat(
      &html,
      "<h1>Canary %s: <span class=\"%s\">%s</span></h1>\n"
      "<p>service <b>%s</b>, candidate <b>%s</b> against stable <b>%s</b>; "
      "started %s UTC, ended %s UTC; resumed %d time(s).</p>\n",
      EscapeHtml(run.canary_id()),
      EscapeHtml(run.phase() == "promoted"      ? "Pass"
                 : run.phase() == "rolled_back" ? "Fail"
                                                : ""),
      EscapeHtml(run.phase()), EscapeHtml(run.service()),
      EscapeHtml(run.candidate_version()), EscapeHtml(run.stable_version()),
      Utc(run.created_ms()), Utc(run.ended_ms()), run.resumes());
  html += "<h2>Why</h2><ul>";
  for (const auto& reason : run.final_reasons()) {
    absl::StrAppend(&html, "<li>", EscapeHtml(reason), "</li>");
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
      EscapeHtml(run.budget_tier().empty() ? "-" : run.budget_tier()),
      run.has_budget_remaining_at_start()
          ? absl::StrFormat("%.1f %%", 100 * run.budget_remaining_at_start())
          : std::string("unknown"),
      run.has_budget_remaining_at_end()
          ? absl::StrFormat("%.1f %%", 100 * run.budget_remaining_at_end())
          : std::string("unknown"));
  for (const auto& reason : run.budget_reasons()) {
    absl::StrAppend(&html, "<li>", EscapeHtml(reason), "</li>");
  }
  html += "</ul>\n<h2>Traffic</h2>\n" + TrafficChart(run);
  html +=
      "\n<h2>Steps</h2><table><tr><th>step</th><th>canary share</th>"
      "<th>outcome</th><th>score</th><th>windows b/c</th><th>p95 baseline "
      "(ms)</th><th>p95 canary (ms)</th><th>relative "
      "reward</th><th>extended</th></tr>\n";
  for (const auto& step : run.steps()) {
    const StepP95 p95 = StepP95Ms(step);
    absl::StrAppendFormat(
        &html,
        "<tr><td>%d</td><td>%.0f %%</td><td class=\"%s\">%s</td>"
        "<td>%.0f</td><td>%d/%d</td><td>%.3f</td><td>%.3f</td>"
        "<td>%+.4f</td><td>%d</td></tr>\n",
        step.index() + 1, 100 * step.canary_weight(),
        EscapeHtml(step.outcome()), EscapeHtml(step.outcome()), step.score(),
        step.baseline_windows(), step.canary_windows(), p95.baseline_ms,
        p95.canary_ms, step.relative_reward(), step.extensions());
  }
  html += "</table>\n";
  for (const auto& step : run.steps()) {
    absl::StrAppendFormat(
        &html,
        "<h3>Step %d: %s</h3><p>p95 per reward window, judged from %s to "
        "%s UTC</p>\n",
        step.index() + 1, EscapeHtml(step.outcome()),
        Utc(step.judged_from_ms()), Utc(step.judged_to_ms()));
    html += StepChart(step);
    html +=
        "<table><tr><th>metric</th><th>outcome</th><th>n baseline</th><th>n "
        "canary</th><th>median baseline</th><th>median canary</th>"
        "<th>percentile</th><th>baseline at it</th><th>canary at it</th>"
        "<th>ratio</th><th>p</th><th>test</th><th>reason</th></tr>";
    for (const auto& metric : step.metrics()) {
      absl::StrAppendFormat(
          &html,
          "<tr><td>%s</td><td class=\"%s\">%s</td><td>%d</td><td>%d</td>"
          "<td>%.4g</td><td>%.4g</td><td>p%g</td><td>%.4g</td><td>%.4g</td>"
          "<td>%.4f</td><td>%.4g</td><td>%s</td>"
          "<td style=\"text-align:left\">%s</td></tr>",
          EscapeHtml(metric.name()), EscapeHtml(metric.outcome()),
          EscapeHtml(metric.outcome()), metric.baseline_count(),
          metric.canary_count(), metric.baseline_median(),
          metric.canary_median(), metric.percentile(),
          metric.baseline_at_percentile(), metric.canary_at_percentile(),
          metric.ratio(), metric.p_value(), EscapeHtml(metric.test()),
          EscapeHtml(metric.reason()));
    }
    html += "</table>\n<ul>";
    for (const auto& reason : step.reasons()) {
      absl::StrAppend(&html, "<li>", EscapeHtml(reason), "</li>");
    }
    html += "</ul>\n";
  }
  return report::HtmlPage(absl::StrCat("canary ", run.canary_id()), html,
                          ".Pass{color:#2ca02c}.Fail{color:#d62728}");
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
