#include "staging_harness/staging/stage_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "staging_harness/staging/machine_activity.h"
#include "staging_harness/stats/speedup.h"

namespace phaseloop::staging {
namespace {

double MedianOf(const std::vector<PassSample>& samples, bool wall) {
  std::vector<double> values;
  for (const PassSample& s : samples)
    values.push_back(wall ? s.wall_s : s.cpu_s);
  absl::StatusOr<double> median = stats::Median(values);
  return median.ok() ? *median : 0;
}

nlohmann::json Interval(const stats::SpeedupInterval& interval) {
  return {{"median", interval.median},
          {"low", interval.low},
          {"high", interval.high},
          {"confidence", interval.confidence},
          {"coverage", interval.coverage}};
}

nlohmann::json Build(const runner::BuiltVariant& built) {
  return {{"build_id", built.build_id},
          {"policy", built.variant.policy},
          {"extra_cflags", built.variant.extra_cflags},
          {"link_flags", built.variant.link_flags},
          {"artifacts_hash", built.artifacts_hash},
          {"build_s", built.build_s},
          {"translation_units", built.decisions.size()}};
}

std::string ExecutedRatio(const StageResult& r) {
  return r.executed_ir_ratio > 0 ? absl::StrFormat("%.4f", r.executed_ir_ratio)
                                 : "n/a";
}

std::string ExecutedNote(const char* side, const ExecutedIr& e) {
  return e.available ? absl::StrCat(side, " ", e.count)
                     : absl::StrCat(side, " unavailable (", e.unavailable, ")");
}

nlohmann::json ExecutedJson(const ExecutedIr& e) {
  if (!e.available) return {{"unavailable", e.unavailable}};
  return {{"count", e.count}, {"processes", e.processes}};
}

nlohmann::json Machine(const MachineActivity& m,
                       const std::vector<std::string>& warnings) {
  nlohmann::json j = {{"available", m.available},
                      {"baseline_cpu_share", m.baseline_cpu_share},
                      {"candidate_cpu_share", m.candidate_cpu_share},
                      {"warnings", warnings}};
  j["timed_cpu"] =
      m.timed_cpu >= 0 ? nlohmann::json(m.timed_cpu) : nlohmann::json(nullptr);
  if (m.available) {
    nlohmann::json cpus = nlohmann::json::array();
    for (const CpuActivity& c : m.cpus) {
      cpus.push_back({{"cpu", c.cpu}, {"busy", c.busy}, {"steal", c.steal}});
    }
    j["cpus"] = std::move(cpus);
    j["steal"] = m.steal;
    j["load_start"] = m.load_start;
    j["load_end"] = m.load_end;
  }
  return j;
}

}  // namespace

nlohmann::json BoltJson(const profiling::BoltResult& b) {
  nlohmann::json artifacts = nlohmann::json::array();
  for (const profiling::BoltedArtifact& a : b.artifacts) {
    artifacts.push_back({{"path", a.path},
                         {"optimized", a.optimized},
                         {"profiles", a.profiles},
                         {"estimate", a.estimate},
                         {"note", a.note}});
  }
  return {{"artifacts", std::move(artifacts)},
          {"built_artifacts_hash", b.built_artifacts_hash},
          {"input_seed", b.input_seed ? nlohmann::json(*b.input_seed)
                                      : nlohmann::json(nullptr)},
          {"generated_inputs", b.generated_inputs},
          {"run_s", b.run_s},
          {"bolt_s", b.bolt_s}};
}

std::string BoltNote(const profiling::BoltResult& b) {
  std::string artifacts;
  for (const profiling::BoltedArtifact& a : b.artifacts) {
    absl::StrAppend(
        &artifacts, artifacts.empty() ? "" : ", ", a.path,
        a.optimized ? (a.estimate.empty() ? std::string(" (rewritten)")
                                          : absl::StrCat(" (", a.estimate, ")"))
                    : " (unchanged: " + a.note + ")");
  }
  std::string inputs = "the timed inputs";
  if (b.input_seed && b.generated_inputs > 0) {
    inputs = absl::StrCat("inputs made from seed ", *b.input_seed);
  } else if (b.input_seed) {
    inputs = "the timed inputs (none is generated, so no seed applies)";
  }
  return absl::StrCat(
      "the candidate's programs were rewritten by BOLT from a profile of "
      "its runs on ",
      inputs, ": ", artifacts);
}

std::string FormatStageTable(const std::vector<StageResult>& results) {
  double confidence = TimingOptions().confidence;
  for (const StageResult& r : results) {
    if (r.timing) confidence = r.timing->wall.confidence;
  }
  // The workload column as wide as its longest name (up to 64).
  int name_width = 14;
  for (const StageResult& r : results) {
    name_width = std::max(name_width, static_cast<int>(r.workload.size()));
  }
  std::string out = absl::StrFormat(
      "%-*s %-5s %-10s %8s %-19s %8s %5s %9s %9s %8s %8s %8s\n", name_width,
      "workload", "split", "verdict", "speedup",
      absl::StrFormat("%g%% interval", 100 * confidence), "p", "pairs",
      "base (s)", "cand (s)", "cpu", "instr", "exec-ir");
  std::string notes;
  for (const StageResult& r : results) {
    if (r.timing) {
      const TimingResult& t = *r.timing;
      absl::StrAppend(
          &out, absl::StrFormat(
                    "%-*s %-5s %-10s %8.4f %-19s %8.2g %5d %9.3f %9.3f %8.4f "
                    "%8s %8s\n",
                    name_width, r.workload, r.split, VerdictName(r.verdict),
                    t.wall.median,
                    absl::StrFormat("[%.4f, %.4f]", t.wall.low, t.wall.high),
                    t.p_value, t.baseline.size(), MedianOf(t.baseline, true),
                    MedianOf(t.candidate, true), t.cpu.median,
                    t.instructions_ratio > 0
                        ? absl::StrFormat("%.4f", t.instructions_ratio)
                        : "n/a",
                    ExecutedRatio(r)));
    } else {
      // Blank columns, and the executed IR ratio under its header when known.
      std::string row = absl::StrFormat(
          "%-*s %-5s %-10s %8s %-19s %8s %5s %9s %9s %8s %8s %8s", name_width,
          r.workload, r.split, VerdictName(r.verdict),
          r.verdict == Verdict::kIdentical ? "1" : "-", "", "", "", "", "", "",
          "", r.executed_ir_ratio > 0 ? ExecutedRatio(r) : "");
      absl::StripTrailingAsciiWhitespace(&row);
      absl::StrAppend(&out, row, "\n");
    }
    if (!r.candidate.variant.extra_cflags.empty()) {
      absl::StrAppend(&notes, "  ", r.workload,
                      ": the candidate was built with extra flags ",
                      r.candidate.variant.extra_cflags, "\n");
    }
    if (r.bolt) {
      absl::StrAppend(&notes, "  ", r.workload, ": ", BoltNote(*r.bolt), "\n");
    }
    if (!r.baseline.variant.link_flags.empty()) {
      absl::StrAppend(&notes, "  ", r.workload,
                      ": every build linked with the flags ",
                      absl::StrJoin(r.baseline.variant.link_flags, " "), "\n");
    }
    if (r.optimized_units == 0) {
      absl::StrAppend(&notes, "  ", r.workload,
                      ": the candidate policy ran on none of the ", r.units,
                      " compiler commands, links included (phaseloop-cc "
                      "optimises compile-only commands at the levels the "
                      "policy acts at)\n");
    }
    if (r.verdict != Verdict::kMeasured) {
      absl::StrAppend(&notes, "  ", r.workload, ": ", r.detail, "\n");
    }
    // Too few pairs for the confidence asked: the interval is the pairs'
    // range, which covers the median less often than the header says.
    if (r.timing && r.timing->wall.coverage > 0 &&
        r.timing->wall.coverage < r.timing->wall.confidence) {
      absl::StrAppend(
          &notes, "  ", r.workload,
          absl::StrFormat(": with %d pairs the interval is their range, a "
                          "%.1f %% interval, not %g %%: allow more pairs "
                          "(--max-pairs)\n",
                          r.timing->baseline.size(),
                          100 * r.timing->wall.coverage,
                          100 * r.timing->wall.confidence));
    }
    for (const std::string& warning : r.machine_warnings) {
      absl::StrAppend(&notes, "  ", r.workload, ": busy machine: ", warning,
                      "; ", kBusyMachineAdvice, "\n");
    }
    if (!r.short_runs.empty()) {
      absl::StrAppend(&notes, "  ", r.workload, ": ", r.short_runs, "\n");
    }
    if (r.baseline_executed && r.candidate_executed) {
      absl::StrAppend(&notes, "  ", r.workload, ": executed IR instructions: ",
                      ExecutedNote("baseline", *r.baseline_executed), ", ",
                      ExecutedNote("candidate", *r.candidate_executed), "\n");
    }
    if (r.verdict == Verdict::kMiscompile || r.verdict == Verdict::kTimedOut) {
      absl::StrAppend(&notes, "    cause: ", r.cause, "; ",
                      r.blamed.empty()
                          ? std::string("no (module, pipeline) pair blamed\n")
                          : absl::StrCat("blamed ", r.blamed.size(),
                                         " (module, pipeline) pairs:\n"));
      for (const auto& [module_hash, pipeline] : r.blamed) {
        absl::StrAppend(&notes, "      ", module_hash, "  ", pipeline, "\n");
      }
    }
  }
  absl::StrAppend(&out,
                  "speedup = median of t_baseline / t_candidate over "
                  "interleaved pairs (wall time; > 1 is faster); cpu = the "
                  "same of user+sys; instr = instructions ratio; exec-ir = "
                  "executed IR instructions, baseline / candidate "
                  "(deterministic)\n");
  if (!notes.empty()) absl::StrAppend(&out, notes);
  return out;
}

std::string FormatStageJson(const std::vector<StageResult>& results,
                            const std::string& error) {
  nlohmann::json rows = nlohmann::json::array();
  for (const StageResult& r : results) {
    nlohmann::json row = {{"workload", r.workload},
                          {"split", r.split},
                          {"verdict", VerdictName(r.verdict)},
                          {"detail", r.detail},
                          {"elapsed_s", r.elapsed_s},
                          {"units", r.units},
                          {"optimized_units", r.optimized_units},
                          {"baseline", Build(r.baseline)},
                          {"candidate", Build(r.candidate)}};
    if (r.bolt) row["candidate"]["bolt"] = BoltJson(*r.bolt);
    if (r.verdict == Verdict::kMeasured || r.verdict == Verdict::kIdentical) {
      row["reward"] = {
          {"value", r.reward}, {"low", r.reward_low}, {"high", r.reward_high}};
    }
    if (r.timing) {
      const TimingResult& t = *r.timing;
      row["speedup"] = Interval(t.wall);
      row["cpu_speedup"] = Interval(t.cpu);
      row["p_value"] = t.p_value;
      row["pairs"] = t.baseline.size();
      row["stop_reason"] = t.stop_reason;
      // null, as the table's "n/a", when the kernel gave no counts (a
      // ratio of 0 read as a real figure).
      row["instructions_ratio"] = t.instructions_ratio > 0
                                      ? nlohmann::json(t.instructions_ratio)
                                      : nlohmann::json(nullptr);
      row["baseline_median_s"] = MedianOf(t.baseline, true);
      row["candidate_median_s"] = MedianOf(t.candidate, true);
      row["baseline_cpu_median_s"] = MedianOf(t.baseline, false);
      row["candidate_cpu_median_s"] = MedianOf(t.candidate, false);
      row["machine"] = Machine(t.machine, r.machine_warnings);
      row["short_runs"] = r.short_runs.empty() ? nlohmann::json(nullptr)
                                               : nlohmann::json(r.short_runs);
    } else if (r.verdict == Verdict::kIdentical) {
      row["speedup"] = {{"median", 1.0}, {"low", 1.0}, {"high", 1.0}};
      row["pairs"] = 0;
    }
    if (r.baseline_executed && r.candidate_executed) {
      row["executed_ir"] = {{"baseline", ExecutedJson(*r.baseline_executed)},
                            {"candidate", ExecutedJson(*r.candidate_executed)}};
    }
    if (r.executed_ir_ratio > 0) row["executed_ir_ratio"] = r.executed_ir_ratio;
    if (r.mismatch) {
      row["mismatch"] = {{"run", r.mismatch_run},
                         {"what", r.mismatch->what},
                         {"detail", r.mismatch->detail},
                         {"cause", r.cause}};
      nlohmann::json blamed = nlohmann::json::array();
      for (const auto& [module_hash, pipeline] : r.blamed) {
        blamed.push_back(
            {{"module_hash", module_hash}, {"pipeline", pipeline}});
      }
      row["blamed"] = std::move(blamed);
    }
    rows.push_back(std::move(row));
  }
  nlohmann::json j = {{"workloads", std::move(rows)}};
  if (!error.empty()) j["error"] = error;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace phaseloop::staging
