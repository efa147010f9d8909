#include "tools/loop/loop_report.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "canary/controller/step_figures.h"
#include "common/report/html_page.h"
#include "common/report/svg_chart.h"
#include "nlohmann/json.hpp"
#include "tools/loop/loop_state.h"

namespace phaseloop::loop {
namespace {

using json = nlohmann::json;
using report::EscapeHtml;

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
constexpr char kGood[] = "#2e7d32";
constexpr char kBad[] = "#c62828";
constexpr char kNeutral[] = "#757575";

std::string Short(const std::string& version) {
  return version.empty() ? "plain -O3" : version.substr(0, 12);
}

std::string IterationLabel(const v1::LoopIteration& it) {
  return absl::StrCat("#", it.index() + 1);
}

const v1::CanaryRun* CanaryOf(
    const v1::LoopIteration& it,
    const std::map<std::string, v1::CanaryRun>& canaries) {
  if (it.canary_id().empty()) return nullptr;
  auto found = canaries.find(it.canary_id());
  return found == canaries.end() ? nullptr : &found->second;
}

// The p95 latencies the judge compared, per step.
void StepLatencies(const v1::CanaryRun& canary, std::vector<double>* baseline,
                   std::vector<double>* candidate) {
  for (const auto& step : canary.steps()) {
    const canary::StepP95 p95 = canary::StepP95Ms(step);
    baseline->push_back(p95.known ? p95.baseline_ms : kNone);
    candidate->push_back(p95.known ? p95.canary_ms : kNone);
  }
}

std::string Outcome(const v1::LoopIteration& it) {
  if (!it.canary_phase().empty()) return it.canary_phase();
  for (const auto& stage : it.stages()) {
    if (stage.status() == "failed") return "failed: " + stage.name();
    if (stage.status() == "running") return "in progress: " + stage.name();
  }
  for (const auto& stage : it.stages()) {
    if (stage.status() == "skipped") return "not rolled out";
  }
  return it.finished_ms() > 0 ? "ended" : "pending";
}

std::string WhyEnded(const v1::LoopIteration& it) {
  if (!it.canary_reasons().empty()) {
    return absl::StrJoin(it.canary_reasons(), "; ");
  }
  // The stage that ended the iteration says why.
  std::string last;
  for (const auto& stage : it.stages()) {
    if (stage.status() == "done" || stage.status() == "failed") {
      last = stage.summary();
    }
  }
  return last;
}

std::string Colour(const std::string& outcome) {
  if (outcome == "promoted") return kGood;
  if (outcome == "rolled_back") return kBad;
  return kNeutral;
}

// What the candidate policy built of the service: units off -O3 and
// allocated bytes ("-" before a canary built it).
std::string ServiceBuild(const v1::LoopIteration& it) {
  const v1::LoopBuildFigures& b = it.candidate_build();
  if (b.modules() == 0) return "-";
  return absl::StrFormat("%d of %d units off -O3, %d B", b.modules_changed(),
                         b.modules(), b.alloc_size());
}

std::string Table(const v1::LoopRun& run) {
  std::string html =
      "<table><tr><th>iteration</th><th>candidate</th><th>trained on</th>"
      "<th>gate</th><th>service build</th><th>staging vs stable</th>"
      "<th>canary</th>"
      "<th>final reward</th><th>budget left</th><th>stable after</th>"
      "<th>why</th></tr>\n";
  for (const v1::LoopIteration& it : run.iterations()) {
    const std::string staging =
        it.staged() ? absl::StrFormat("%.4f [%.4f, %.4f] %s",
                                      it.staging_speedup(), it.staging_low(),
                                      it.staging_high(), it.staging_verdict())
                    : "-";
    absl::StrAppend(
        &html, "<tr><td>", it.index() + 1, "</td><td><code>",
        EscapeHtml(it.candidate_version().empty()
                       ? "-"
                       : it.candidate_version().substr(0, 12)),
        "</code></td><td>",
        it.train_transitions() > 0
            ? absl::StrCat(
                  it.train_transitions(), " transitions, ",
                  it.train_canary_runs(), " canary runs",
                  it.explored_pipeline().empty()
                      ? ""
                      : absl::StrCat("; exploring <code>",
                                     EscapeHtml(it.explored_pipeline()),
                                     "</code>"))
            : "-",
        "</td><td>",
        GateVerdict(it).empty() ? std::string("-") : GateVerdict(it),
        "</td><td>", ServiceBuild(it), "</td><td>", EscapeHtml(staging),
        "</td><td style=\"color:", Colour(it.canary_phase()), "\">",
        EscapeHtml(Outcome(it)), "</td><td>",
        it.has_final_reward() ? absl::StrFormat("%+.4f", it.final_reward())
                              : "-",
        "</td><td>",
        it.has_budget_remaining()
            ? absl::StrFormat("%.1f %%", 100 * it.budget_remaining())
            : "-",
        "</td><td><code>",
        EscapeHtml(it.stable_after().empty() && it.canary_phase().empty()
                       ? "-"
                       : Short(it.stable_after())),
        "</code></td><td>", EscapeHtml(WhyEnded(it)), "</td></tr>\n");
  }
  return html + "</table>\n";
}

std::string StageTable(const v1::LoopRun& run) {
  std::string html =
      "<table><tr><th>iteration</th><th>stage</th><th>status</th>"
      "<th>time</th><th>attempts</th><th>figures</th></tr>\n";
  for (const v1::LoopIteration& it : run.iterations()) {
    for (const v1::LoopStage& stage : it.stages()) {
      const int64_t ms = stage.finished_ms() > stage.started_ms()
                             ? stage.finished_ms() - stage.started_ms()
                             : 0;
      absl::StrAppend(&html, "<tr><td>", it.index() + 1, "</td><td>",
                      EscapeHtml(stage.name()), "</td><td>",
                      EscapeHtml(stage.status()), "</td><td>",
                      ms > 0 ? absl::StrFormat("%.0f s", ms / 1000.0) : "-",
                      "</td><td>", stage.attempts(), "</td><td>",
                      EscapeHtml(stage.summary()), "</td></tr>\n");
    }
  }
  return html + "</table>\n";
}

}  // namespace

std::string LoopReportHtml(
    const v1::LoopRun& run,
    const std::map<std::string, v1::CanaryRun>& canaries) {
  std::string body = absl::StrCat(
      "<h1>phaseloop loop <code>", EscapeHtml(run.loop_id()), "</code></h1>\n",
      "<p>", EscapeHtml(run.phase()), ": ", run.iterations_size(), " of ",
      run.iterations_planned(), " iterations; started ", run.starts(),
      " time(s); config <code>", EscapeHtml(run.config_path()),
      "</code>; replay buffer <code>", EscapeHtml(run.buffer_path()),
      "</code></p>\n");
  if (!run.failure().empty()) {
    absl::StrAppend(&body, "<p class=\"fail\">", EscapeHtml(run.failure()),
                    "</p>\n");
  }
  absl::StrAppend(&body, "<h2>Iterations</h2>\n", Table(run));

  report::BarChart rewards;
  rewards.title = "Final reward per iteration (canary)";
  report::LineChart staging;
  staging.title = "Staging: candidate speedup vs stable (99 % interval)";
  staging.x_label = "iteration";
  staging.y_unit = "x";
  report::Series median{"median", {}, kGood}, low{"low", {}, kNeutral},
      high{"high", {}, kNeutral};
  report::LineChart budget;
  budget.title = "Error budget remaining after the canary";
  budget.x_label = "iteration";
  budget.y_unit = "%";
  report::Series remaining{"budget remaining", {}, ""};
  report::LineChart transitions;
  transitions.title = "What the learner trained on";
  transitions.x_label = "iteration";
  report::Series trained{"transitions", {}, ""};
  for (const v1::LoopIteration& it : run.iterations()) {
    const std::string label = IterationLabel(it);
    if (it.has_final_reward()) {
      rewards.bars.push_back(
          {label, it.final_reward(), Colour(it.canary_phase()),
           absl::StrFormat("%s %s: %+.4f (%s)", label,
                           Short(it.candidate_version()), it.final_reward(),
                           it.canary_phase())});
    }
    staging.x_ticks.push_back(label);
    budget.x_ticks.push_back(label);
    transitions.x_ticks.push_back(label);
    median.values.push_back(it.staged() ? it.staging_speedup() : kNone);
    low.values.push_back(it.staged() ? it.staging_low() : kNone);
    high.values.push_back(it.staged() ? it.staging_high() : kNone);
    remaining.values.push_back(
        it.has_budget_remaining() ? 100 * it.budget_remaining() : kNone);
    trained.values.push_back(it.train_transitions() > 0 ? it.train_transitions()
                                                        : kNone);
  }
  // The service's build with each iteration's candidate and with stable.
  report::LineChart size;
  size.title = "Service build: allocated bytes of the optimised units";
  size.x_label = "iteration";
  size.y_unit = "B";
  report::Series size_candidate{"candidate", {}, kGood},
      size_stable{"stable", {}, kNeutral};
  report::LineChart cost;
  cost.title = "Compile time of the candidate's build (all units)";
  cost.x_label = "iteration";
  cost.y_unit = "s";
  report::Series cost_compile{"compile", {}, ""},
      cost_policy{"policy decisions", {}, kNeutral};
  for (const v1::LoopIteration& it : run.iterations()) {
    const bool built = it.candidate_build().modules() > 0;
    size.x_ticks.push_back(IterationLabel(it));
    cost.x_ticks.push_back(IterationLabel(it));
    size_candidate.values.push_back(
        built ? static_cast<double>(it.candidate_build().alloc_size()) : kNone);
    size_stable.values.push_back(
        it.stable_build().modules() > 0
            ? static_cast<double>(it.stable_build().alloc_size())
            : kNone);
    cost_compile.values.push_back(
        built ? it.candidate_build().compile_time_us() / 1e6 : kNone);
    cost_policy.values.push_back(
        built ? it.candidate_build().policy_time_us() / 1e6 : kNone);
  }
  size.series = {size_candidate, size_stable};
  cost.series = {cost_compile, cost_policy};
  staging.series = {median, low, high};
  budget.series = {remaining};
  transitions.series = {trained};
  absl::StrAppend(
      &body, "<h2>Rewards and budget</h2>\n<div class=\"row\">",
      report::BarChartSvg(rewards), report::LineChartSvg(budget), "</div>\n",
      "<h2>Staging and training</h2>\n<div class=\"row\">",
      report::LineChartSvg(staging), report::LineChartSvg(transitions),
      "</div>\n", "<h2>The service's build</h2>\n<div class=\"row\">",
      report::LineChartSvg(size), report::LineChartSvg(cost), "</div>\n");

  absl::StrAppend(&body,
                  "<h2>Canary steps: p95 latency, baseline vs "
                  "candidate</h2>\n<div class=\"row\">");
  for (const v1::LoopIteration& it : run.iterations()) {
    if (it.canary_id().empty()) continue;
    const v1::CanaryRun* canary = CanaryOf(it, canaries);
    if (canary == nullptr) {
      absl::StrAppend(&body, "<p>", IterationLabel(it), ": canary ",
                      EscapeHtml(it.canary_id()), " has no state</p>");
      continue;
    }
    report::LineChart steps;
    steps.title =
        absl::StrFormat("%s %s: %s", IterationLabel(it),
                        Short(canary->candidate_version()), canary->phase());
    steps.x_label = "step (canary share)";
    steps.y_unit = "ms";
    report::Series base{"baseline (stable)", {}, kNeutral},
        cand{"candidate", {}, Colour(canary->phase())};
    StepLatencies(*canary, &base.values, &cand.values);
    for (const auto& step : canary->steps()) {
      steps.x_ticks.push_back(
          absl::StrFormat("%.0f %%", 100 * step.canary_weight()));
    }
    steps.series = {base, cand};
    absl::StrAppend(&body, report::LineChartSvg(steps));
  }
  absl::StrAppend(&body, "</div>\n<h2>Stages</h2>\n", StageTable(run));
  return report::HtmlPage(absl::StrCat("phaseloop loop ", run.loop_id()), body,
                          ".row{display:flex;flex-wrap:wrap;gap:24px}"
                          "td:last-child{text-align:left}"
                          ".fail{color:#c62828}");
}

std::string LoopReportJson(
    const v1::LoopRun& run,
    const std::map<std::string, v1::CanaryRun>& canaries) {
  json iterations = json::array();
  for (const v1::LoopIteration& it : run.iterations()) {
    json row = {{"iteration", it.index() + 1},
                {"candidate_version", it.candidate_version()},
                {"gate_passed", it.gate_passed()},
                {"gate", GateVerdict(it).empty() ? json(nullptr)
                                                 : json(GateVerdict(it))},
                {"train_transitions", it.train_transitions()},
                {"train_canary_runs", it.train_canary_runs()},
                {"explore_evaluations", it.explore_evaluations()},
                {"explored_pipeline", it.explored_pipeline()},
                {"exploration_reason", it.exploration_reason()},
                {"outcome", Outcome(it)},
                {"why", WhyEnded(it)},
                {"stable_before", it.stable_before()},
                {"stable_after", it.stable_after()},
                {"canary_id", it.canary_id()}};
    row["staging"] = it.staged() ? json{{"verdict", it.staging_verdict()},
                                        {"speedup", it.staging_speedup()},
                                        {"low", it.staging_low()},
                                        {"high", it.staging_high()}}
                                 : json(nullptr);
    row["final_reward"] =
        it.has_final_reward() ? json(it.final_reward()) : json(nullptr);
    row["budget_remaining"] =
        it.has_budget_remaining() ? json(it.budget_remaining()) : json(nullptr);
    json steps = json::array();
    if (const v1::CanaryRun* canary = CanaryOf(it, canaries)) {
      std::vector<double> base, cand;
      StepLatencies(*canary, &base, &cand);
      for (int s = 0; s < canary->steps_size(); ++s) {
        const auto& step = canary->steps(s);
        steps.push_back(
            {{"canary_weight", step.canary_weight()},
             {"outcome", step.outcome()},
             {"p95_baseline_ms",
              std::isfinite(base[s]) ? json(base[s]) : json(nullptr)},
             {"p95_canary_ms",
              std::isfinite(cand[s]) ? json(cand[s]) : json(nullptr)},
             {"relative_reward", step.relative_reward()}});
      }
    }
    row["canary_steps"] = steps;
    for (const auto& [name, figures] :
         {std::pair{"candidate_build", &it.candidate_build()},
          std::pair{"stable_build", &it.stable_build()}}) {
      row[name] =
          figures->modules() > 0
              ? json{{"build_id", figures->build_id()},
                     {"figures_from_build_id",
                      figures->figures_from_build_id().empty()
                          ? json(nullptr)
                          : json(figures->figures_from_build_id())},
                     {"optimised_units", figures->modules()},
                     {"units_off_o3", figures->modules_changed()},
                     {"alloc_size", figures->alloc_size()},
                     {"compile_time_s", figures->compile_time_us() / 1e6},
                     {"policy_time_s", figures->policy_time_us() / 1e6}}
              : json(nullptr);
    }
    json stages = json::array();
    for (const v1::LoopStage& stage : it.stages()) {
      stages.push_back({{"name", stage.name()},
                        {"status", stage.status()},
                        {"attempts", stage.attempts()},
                        {"started_ms", stage.started_ms()},
                        {"finished_ms", stage.finished_ms()},
                        {"summary", stage.summary()}});
    }
    row["stages"] = stages;
    iterations.push_back(row);
  }
  return json{{"loop_id", run.loop_id()},
              {"phase", run.phase()},
              {"iterations_planned", run.iterations_planned()},
              {"starts", run.starts()},
              {"failure", run.failure()},
              {"iterations", iterations}}
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace phaseloop::loop
