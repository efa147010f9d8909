// The eval report's fixed-reference figures and its two forms (table and
// JSON); the measuring is in policy_evaluation.cc.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "offline_rl/evaluation/policy_evaluation.h"

namespace phaseloop::evaluation {

std::vector<FixedReferenceEval> AggregateFixed(
    const std::vector<std::string>& pipelines,
    const std::vector<ModuleEval>& modules) {
  std::vector<FixedReferenceEval> out(pipelines.size() + 1);
  out[0].pipeline = "default<Oz>";
  for (size_t p = 0; p < pipelines.size(); ++p)
    out[p + 1].pipeline = pipelines[p];
  std::vector<double> oz_log(out.size(), 0), policy_log(out.size(), 0);
  for (const ModuleEval& m : modules) {
    if (!m.error.empty() || m.alloc_size <= 0 || m.alloc_size_oz <= 0) continue;
    for (size_t f = 0; f < out.size(); ++f) {
      const int64_t fixed = f == 0 ? m.alloc_size_oz
                            : f - 1 < m.fixed_alloc_size.size()
                                ? m.fixed_alloc_size[f - 1]
                                : -1;
      if (fixed <= 0) continue;
      ++out[f].modules;
      oz_log[f] += std::log(static_cast<double>(m.alloc_size_oz) / fixed);
      policy_log[f] += std::log(static_cast<double>(fixed) / m.alloc_size);
      if (fixed > m.alloc_size_oz) ++out[f].alloc_larger_than_oz;
    }
  }
  for (size_t f = 0; f < out.size(); ++f) {
    if (out[f].modules == 0) continue;
    out[f].alloc_oz_ratio = std::exp(oz_log[f] / out[f].modules);
    out[f].policy_vs_fixed = std::exp(policy_log[f] / out[f].modules);
  }
  return out;
}

std::string FormatReportTable(const EvalReport& report) {
  std::string out = absl::StrFormat(
      "policy %s (%s %s%s%s)\ncorpus %s%s\n\n", report.policy,
      report.policy_kind, report.policy_version.substr(0, 12),
      report.objective.empty() ? "" : absl::StrCat(", ", report.objective),
      report.mode.empty() ? "" : absl::StrCat(", mode ", report.mode),
      report.corpus_dir,
      report.split.empty() ? "" : absl::StrCat(" split ", report.split));
  absl::StrAppendFormat(
      &out, "%-36s %9s %9s %9s %7s %9s %9s %7s %8s %8s %8s %9s\n", "module",
      "text_O0", "text_Oz", "text", "Oz/T", "alloc_Oz", "alloc", "Oz/A",
      "ir_O0", "ir_Oz", "ir", "policy_ms");
  for (const ModuleEval& m : report.modules) {
    std::string name =
        m.name.size() > 36
            ? absl::StrCat("..", m.name.substr(m.name.size() - 34))
            : m.name;
    if (!m.error.empty()) {
      absl::StrAppendFormat(&out, "%-36s FAILED %s\n", name, m.error);
      continue;
    }
    absl::StrAppendFormat(
        &out, "%-36s %9d %9d %9d %7.4f %9d %9d %7.4f %8d %8d %8d %9.2f\n", name,
        m.text_size_o0, m.text_size_oz, m.text_size,
        m.text_size > 0 ? static_cast<double>(m.text_size_oz) / m.text_size
                        : 0.0,
        m.alloc_size_oz, m.alloc_size,
        m.alloc_size > 0 ? static_cast<double>(m.alloc_size_oz) / m.alloc_size
                         : 0.0,
        m.ir_count_o0, m.ir_count_oz, m.ir_count, m.policy_ms);
  }
  const EvalAggregates& a = report.aggregates;
  absl::StrAppendFormat(
      &out,
      "\nmodules %d (failed %d)\n"
      "alloc_oz_ratio   %.4f  (whole objects: geomean A_Oz/A; larger than "
      "-Oz on %d, worst A/A_Oz %.4f)\n"
      "text_oz_ratio    %.4f  (geomean T_Oz/T; >1 smaller than -Oz; larger "
      "than -Oz on %d, smaller on %d, worst T/T_Oz %.4f)\n"
      "over_oz          %.4f  (mean (IC_Oz-IC)/IC_Oz)\n"
      "geomean_oz_ratio %.4f  (geomean IC_Oz/IC)\n"
      "gym_score        %.4f  (geomean (IC_O0-IC)/(IC_O0-IC_Oz); %d modules "
      "excluded)\n"
      "policy time      %.2f ms mean, %.2f ms max per module\n",
      a.modules, a.failed, a.alloc_oz_ratio, a.alloc_larger_than_oz,
      a.worst_alloc_ratio, a.text_oz_ratio, a.text_larger_than_oz,
      a.text_smaller_than_oz, a.worst_text_ratio, a.over_oz, a.geomean_oz_ratio,
      a.gym_score, a.gym_excluded, a.mean_policy_ms, a.max_policy_ms);
  if (a.clang_oz_modules > 0) {
    absl::StrAppendFormat(
        &out,
        "clang -Oz        %.4f  (geomean A_clang-Oz/A over %d modules: clang's "
        "own -Oz differs from the -Oz reference (opt-16's) on %d, geomean "
        "A_clang-Oz/A_Oz %.4f)\n",
        a.alloc_clang_oz_ratio, a.clang_oz_modules, a.clang_oz_differs,
        a.clang_oz_vs_oz);
  }
  if (report.fixed.size() > 1) {
    absl::StrAppend(&out,
                    "\nfixed pipelines (whole objects, over the modules each "
                    "measured)\n");
    absl::StrAppendFormat(&out, "  %-44s %8s %8s %12s %14s\n", "pipeline",
                          "modules", "Oz/A", "larger_Oz", "policy_vs_it");
    for (const FixedReferenceEval& f : report.fixed) {
      absl::StrAppendFormat(&out, "  %-44s %8d %8.4f %12d %14.4f%s\n",
                            f.pipeline, f.modules, f.alloc_oz_ratio,
                            f.alloc_larger_than_oz, f.policy_vs_fixed,
                            f.pipeline == report.best_fixed ? "  best" : "");
    }
    absl::StrAppendFormat(
        &out,
        "policy vs best fixed %.4f  (geomean A_best/A: above 1 the policy's "
        "objects are smaller than %s's)\n",
        report.policy_vs_best_fixed, report.best_fixed);
  }
  return out;
}

std::string FormatReportJson(const EvalReport& report) {
  nlohmann::json j;
  j["policy"] = report.policy;
  j["policy_kind"] = report.policy_kind;
  j["policy_version"] = report.policy_version;
  j["objective"] = report.objective;
  j["mode"] = report.mode;
  j["corpus"] = report.corpus_dir;
  j["split"] = report.split;
  j["convention"] = report.convention;
  nlohmann::json modules = nlohmann::json::array();
  for (const ModuleEval& m : report.modules) {
    nlohmann::json row = {{"name", m.name},
                          {"ir_count_o0", m.ir_count_o0},
                          {"ir_count_oz", m.ir_count_oz},
                          {"ir_count", m.ir_count},
                          {"text_size_o0", m.text_size_o0},
                          {"text_size_oz", m.text_size_oz},
                          {"text_size", m.text_size},
                          {"alloc_size_oz", m.alloc_size_oz},
                          {"alloc_size", m.alloc_size},
                          {"alloc_size_clang_oz", m.alloc_size_clang_oz},
                          {"text_size_clang_oz", m.text_size_clang_oz},
                          {"policy_ms", m.policy_ms},
                          {"total_ms", m.total_ms},
                          {"pipeline", m.pipeline},
                          {"note", m.note}};
    if (!m.fixed_alloc_size.empty()) {
      row["fixed_alloc_size"] = m.fixed_alloc_size;
    }
    if (!m.error.empty()) row["error"] = m.error;
    modules.push_back(std::move(row));
  }
  j["modules"] = std::move(modules);
  const EvalAggregates& a = report.aggregates;
  // Nothing measured (every module failed): no figure, not 0.0, which read
  // as a ratio and a comparison with the best fixed pipeline.
  const bool measured = a.modules > 0;
  auto figure = [measured](double value) {
    return measured ? nlohmann::json(value) : nlohmann::json(nullptr);
  };
  j["aggregates"] = {{"modules", a.modules},
                     {"failed", a.failed},
                     {"text_oz_ratio", figure(a.text_oz_ratio)},
                     {"alloc_oz_ratio", figure(a.alloc_oz_ratio)},
                     {"alloc_larger_than_oz", a.alloc_larger_than_oz},
                     {"worst_alloc_ratio", figure(a.worst_alloc_ratio)},
                     {"clang_oz_modules", a.clang_oz_modules},
                     {"clang_oz_differs", a.clang_oz_differs},
                     {"clang_oz_vs_oz", figure(a.clang_oz_vs_oz)},
                     {"alloc_clang_oz_ratio", figure(a.alloc_clang_oz_ratio)},
                     {"over_oz", figure(a.over_oz)},
                     {"geomean_oz_ratio", figure(a.geomean_oz_ratio)},
                     {"gym_score", figure(a.gym_score)},
                     {"text_excluded", a.text_excluded},
                     {"ir_excluded", a.ir_excluded},
                     {"gym_excluded", a.gym_excluded},
                     {"text_larger_than_oz", a.text_larger_than_oz},
                     {"text_smaller_than_oz", a.text_smaller_than_oz},
                     {"worst_text_ratio", figure(a.worst_text_ratio)},
                     {"mean_policy_ms", figure(a.mean_policy_ms)},
                     {"max_policy_ms", figure(a.max_policy_ms)}};
  nlohmann::json fixed = nlohmann::json::array();
  for (const FixedReferenceEval& f : report.fixed) {
    auto fixed_figure = [&f](double value) {
      return f.modules > 0 ? nlohmann::json(value) : nlohmann::json(nullptr);
    };
    fixed.push_back({{"pipeline", f.pipeline},
                     {"modules", f.modules},
                     {"alloc_oz_ratio", fixed_figure(f.alloc_oz_ratio)},
                     {"alloc_larger_than_oz", f.alloc_larger_than_oz},
                     {"policy_vs_fixed", fixed_figure(f.policy_vs_fixed)}});
  }
  j["fixed_pipelines"] = std::move(fixed);
  j["best_fixed"] = measured && !report.best_fixed.empty()
                        ? nlohmann::json(report.best_fixed)
                        : nlohmann::json(nullptr);
  j["policy_vs_best_fixed"] = report.best_fixed.empty()
                                  ? nlohmann::json(nullptr)
                                  : figure(report.policy_vs_best_fixed);
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace phaseloop::evaluation
