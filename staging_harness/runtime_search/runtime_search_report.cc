#include "staging_harness/runtime_search/runtime_search_report.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "staging_harness/staging/machine_activity.h"
#include "staging_harness/staging/stage_report.h"

namespace phaseloop::runtime_search {
namespace {

std::string Short(const std::string& hash) { return hash.substr(0, 12); }

std::string Figure(const Evaluation& e) {
  if (e.pairs > 0) {
    return absl::StrFormat("%.4f [%.4f, %.4f]", e.speedup, e.low, e.high);
  }
  return e.verdict == "identical" ? "1 (byte-identical)" : "-";
}

nlohmann::json EvaluationJson(const Evaluation& e) {
  nlohmann::json j = {{"index", e.index},
                      {"module_hash", e.module_hash},
                      {"source", e.source},
                      {"pipeline", e.pipeline},
                      {"verdict", e.verdict},
                      {"detail", e.detail},
                      {"pairs", e.pairs},
                      {"seconds", e.seconds},
                      {"build_id", e.build_id},
                      {"episode_ids", e.episode_ids},
                      {"build_s", e.build_s},
                      {"objects_reused", e.objects_reused},
                      {"objects_compiled", e.objects_compiled},
                      {"machine_warnings", e.machine_warnings}};
  j["short_runs"] = e.short_runs.empty() ? nlohmann::json(nullptr)
                                         : nlohmann::json(e.short_runs);
  j["executed_ir_ratio"] = e.executed_ir_ratio > 0
                               ? nlohmann::json(e.executed_ir_ratio)
                               : nlohmann::json(nullptr);
  j["speedup"] = e.pairs > 0 || e.verdict == "identical"
                     ? nlohmann::json{{"median", e.speedup},
                                      {"low", e.low},
                                      {"high", e.high}}
                     : nlohmann::json(nullptr);
  return j;
}

std::map<std::string, int> Counts(const RuntimeSearchResult& r) {
  std::map<std::string, int> counts = {
      {"measured", 0}, {"identical", 0}, {"miscompile", 0}, {"refused", 0}};
  for (const Evaluation& e : r.evaluations) ++counts[e.verdict];
  return counts;
}

// "reused/units" of a build's objects; "-" without the cache.
std::string Objects(const RuntimeSearchResult& r, const Evaluation& e) {
  if (r.object_cache_dir.empty()) return "-";
  return absl::StrCat(e.objects_reused, "/",
                      e.objects_reused + e.objects_compiled);
}

struct BuildTotals {
  int builds = 0, reused = 0, compiled = 0;
  double seconds = 0;
};
BuildTotals TotalsOf(const RuntimeSearchResult& r) {
  BuildTotals t;
  for (const std::vector<Evaluation>* list : {&r.evaluations, &r.runoff}) {
    for (const Evaluation& e : *list) {
      ++t.builds;
      t.reused += e.objects_reused;
      t.compiled += e.objects_compiled;
      t.seconds += e.build_s;
    }
  }
  return t;
}

std::string EvaluationRow(const RuntimeSearchResult& r, const Evaluation& e) {
  return absl::StrFormat("%3d %-12s %-10s %-26s %5d %6.1f %6.1f %7s %8s  %s\n",
                         e.index, Short(e.module_hash), e.verdict, Figure(e),
                         e.pairs, e.seconds, e.build_s, Objects(r, e),
                         e.executed_ir_ratio > 0
                             ? absl::StrFormat("%.5f", e.executed_ir_ratio)
                             : "-",
                         e.pipeline);
}

}  // namespace

std::string FormatRuntimeSearchTable(const RuntimeSearchResult& r) {
  std::string out = absl::StrFormat(
      "runtime search on %s: %s; %d of %d samples in the program, %d "
      "attributed to optimised units\n",
      r.workload, r.profile.method, r.profile.program, r.profile.total,
      r.profile.attributed);
  absl::StrAppend(&out, absl::StrFormat("%-12s %-28s %7s  %s\n", "module",
                                        "source", "share", "hottest symbols"));
  std::map<std::string, bool> hot;
  for (const HotModule& m : r.hot) hot[m.module_hash] = true;
  for (const HotModule& m : r.profile.modules) {
    std::string symbols;
    for (const auto& [name, samples] : m.top_symbols) {
      absl::StrAppend(&symbols, symbols.empty() ? "" : ", ", name);
    }
    absl::StrAppend(
        &out,
        absl::StrFormat("%-12s %-28s %6.1f%%  %s%s\n", Short(m.module_hash),
                        m.source, 100 * m.share, symbols,
                        hot[m.module_hash] ? "  (searched)" : ""));
  }
  absl::StrAppend(
      &out, "\n",
      absl::StrFormat("%3s %-12s %-10s %-26s %5s %6s %6s %7s %8s  %s\n", "#",
                      "module", "verdict", "speedup [interval]", "pairs", "s",
                      "build", "reused", "exec IR", "pipeline"));
  for (const Evaluation& e : r.evaluations) {
    absl::StrAppend(&out, EvaluationRow(r, e));
  }
  if (!r.runoff.empty()) {
    absl::StrAppend(&out, absl::StrFormat("runoff (the contenders timed again, "
                                          "%.0f s):\n",
                                          r.runoff_s));
    for (const Evaluation& e : r.runoff) {
      absl::StrAppend(&out, EvaluationRow(r, e));
    }
  }
  for (const std::string& source : r.runoff_skipped) {
    absl::StrAppend(&out, "runoff: budget spent before ", source,
                    "; its search median picked its winner\n");
  }
  const std::map<std::string, int> counts = Counts(r);
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "\n%d evaluations (%d measured, %d byte-identical, %d miscompiled, "
          "%d refused), %d blocked pairs skipped; stopped by %s after %.0f s\n",
          r.evaluations.size(), counts.at("measured"), counts.at("identical"),
          counts.at("miscompile"), counts.at("refused"), r.blocked_skipped,
          r.stop_reason, r.search_s));
  int busy = 0;
  std::string short_runs;  // the baseline's: the same for every timing
  for (const std::vector<Evaluation>* list : {&r.evaluations, &r.runoff}) {
    for (const Evaluation& e : *list) {
      busy += !e.machine_warnings.empty();
      if (short_runs.empty()) short_runs = e.short_runs;
    }
  }
  if (!short_runs.empty()) {
    absl::StrAppend(&out, short_runs, " (figures of the first timing)\n");
  }
  if (busy > 0) {
    absl::StrAppend(
        &out, absl::StrFormat("busy machine during %d of the %d search and "
                              "runoff timings (machine_warnings in the "
                              "JSON): their picks may be the machine's; %s\n",
                              busy, r.evaluations.size() + r.runoff.size(),
                              staging::kBusyMachineAdvice));
  }
  const BuildTotals builds = TotalsOf(r);
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "builds: baseline %.1f s, evaluations %.1f s each on average; %s\n",
          r.baseline_build_s,
          builds.builds > 0 ? builds.seconds / builds.builds : 0.0,
          r.object_cache_dir.empty()
              ? "no object cache (every unit compiled)"
              : absl::StrFormat("%d objects reused, %d compiled (object "
                                "cache %s)",
                                builds.reused, builds.compiled,
                                r.object_cache_dir)));
  if (!r.link_flags.empty()) {
    absl::StrAppend(&out, "every build (the baseline's too) linked with ",
                    absl::StrJoin(r.link_flags, " "), "\n");
  }
  if (r.profiled) {
    absl::StrAppend(
        &out, absl::StrFormat("the build flags alone (%s; every evaluation "
                              "is built with them): %s (%s, %d pairs)\n",
                              r.candidate_cflags, Figure(*r.profiled),
                              r.profiled->verdict, r.profiled->pairs));
    for (const std::string& warning : r.profiled->machine_warnings) {
      absl::StrAppend(&out, "  busy machine while screening it: ", warning,
                      "; ", staging::kBusyMachineAdvice, "\n");
    }
  }
  if (r.winners.empty()) {
    absl::StrAppend(&out,
                    "no pipeline beat -O3 on any hot module in the search's "
                    "short runs",
                    r.confirmation ? "" : ": nothing to confirm", "\n");
  } else {
    absl::StrAppend(&out, "winners:\n");
    for (const auto& [hash, pipeline] : r.winners) {
      absl::StrAppend(&out, "  ", Short(hash), "  ", pipeline, "\n");
    }
  }
  if (r.confirmation) {
    const Evaluation& c = *r.confirmation;
    absl::StrAppend(
        &out, absl::StrFormat(
                  "confirmed speedup vs -O3: %s (%s, %d pairs, %.0f s)%s\n",
                  Figure(c), c.verdict, c.pairs, c.seconds,
                  r.profile_confirmed
                      ? "; the build flags' own gain (no table to write)"
                  : r.policy_table.empty()
                      ? "; its interval does not lie above 1: no winning policy"
                      : ""));
    if (c.verdict != "confirmed") absl::StrAppend(&out, "  ", c.detail, "\n");
    for (const std::string& warning : c.machine_warnings) {
      absl::StrAppend(&out, "  busy machine while confirming: ", warning, "; ",
                      staging::kBusyMachineAdvice, "\n");
    }
  }
  if (r.bolted) {
    const Evaluation& b = *r.bolted;
    absl::StrAppend(
        &out, absl::StrFormat(
                  "%s vs -O3: %s (%s, %d pairs, %.0f s): %s\n", b.pipeline,
                  Figure(b), b.verdict, b.pairs, b.seconds,
                  r.bolt_chosen ? "chosen (stage with --bolt)"
                                : "not chosen (its interval does not lie "
                                  "above 1, or its median is not above the "
                                  "pick's)"));
    if (b.verdict != "confirmed") absl::StrAppend(&out, "  ", b.detail, "\n");
    if (r.bolt) absl::StrAppend(&out, "  ", staging::BoltNote(*r.bolt), "\n");
    for (const std::string& warning : b.machine_warnings) {
      absl::StrAppend(&out, "  busy machine while timing it: ", warning, "; ",
                      staging::kBusyMachineAdvice, "\n");
    }
  }
  for (const std::string& note : r.profile.notes) {
    absl::StrAppend(&out, "note: ", note, "\n");
  }
  absl::StrAppend(&out,
                  "speedup = median of t_O3 / t_candidate over interleaved "
                  "pairs (> 1 is faster); the search's short runs screen, "
                  "the runoff ranks the contenders, the confirmation's full "
                  "run is the result; exec IR = executed IR instructions, "
                  "baseline / candidate (with --count-executed)\n");
  return out;
}

nlohmann::json RuntimeSearchJson(const RuntimeSearchResult& r) {
  nlohmann::json modules = nlohmann::json::array();
  std::map<std::string, bool> hot;
  for (const HotModule& m : r.hot) hot[m.module_hash] = true;
  for (const HotModule& m : r.profile.modules) {
    nlohmann::json symbols = nlohmann::json::array();
    for (const auto& [name, samples] : m.top_symbols) {
      symbols.push_back({{"symbol", name}, {"samples", samples}});
    }
    modules.push_back({{"module_hash", m.module_hash},
                       {"source", m.source},
                       {"samples", m.samples},
                       {"share", m.share},
                       {"hot", hot[m.module_hash]},
                       {"top_symbols", symbols}});
  }
  nlohmann::json j = {{"workload", r.workload},
                      {"objective", "runtime"},
                      {"profile",
                       {{"method", r.profile.method},
                        {"samples", r.profile.total},
                        {"program_samples", r.profile.program},
                        {"attributed_samples", r.profile.attributed},
                        {"modules", modules},
                        {"notes", r.profile.notes}}},
                      {"refused_vocabulary", r.refused_vocabulary},
                      {"stop_reason", r.stop_reason},
                      {"search_s", r.search_s},
                      {"object_cache_dir", r.object_cache_dir},
                      {"baseline_build_s", r.baseline_build_s},
                      {"elapsed_s", r.elapsed_s},
                      {"miscompile_found", r.miscompile_found}};
  j["evaluations"] = nlohmann::json::array();
  for (const Evaluation& e : r.evaluations) {
    j["evaluations"].push_back(EvaluationJson(e));
  }
  j["runoff"] = nlohmann::json::array();
  for (const Evaluation& e : r.runoff) {
    j["runoff"].push_back(EvaluationJson(e));
  }
  j["runoff_skipped"] = r.runoff_skipped;
  j["runoff_s"] = r.runoff_s;
  const BuildTotals builds = TotalsOf(r);
  nlohmann::json counts = {{"evaluations", r.evaluations.size()},
                           {"blocked_skipped", r.blocked_skipped},
                           {"objects_reused", builds.reused},
                           {"objects_compiled", builds.compiled},
                           {"build_s", builds.seconds}};
  for (const auto& [verdict, n] : Counts(r)) counts[verdict] = n;
  j["counts"] = counts;
  j["winners"] = nlohmann::json::array();
  for (const auto& [hash, pipeline] : r.winners) {
    j["winners"].push_back({{"module_hash", hash}, {"pipeline", pipeline}});
  }
  j["confirmation"] = r.confirmation ? EvaluationJson(*r.confirmation)
                                     : nlohmann::json(nullptr);
  j["confirmed_speedup"] =
      r.confirmation && r.confirmation->pairs > 0
          ? nlohmann::json{{"median", r.confirmation->speedup},
                           {"low", r.confirmation->low},
                           {"high", r.confirmation->high}}
          : nlohmann::json(nullptr);
  j["policy_written"] = !r.policy_table.empty();
  j["candidate_cflags"] = r.candidate_cflags;
  j["link_flags"] = r.link_flags;
  j["profiled"] =
      r.profiled ? EvaluationJson(*r.profiled) : nlohmann::json(nullptr);
  j["profile_confirmed"] = r.profile_confirmed;
  j["bolted"] = r.bolted ? EvaluationJson(*r.bolted) : nlohmann::json(nullptr);
  j["bolt"] = r.bolt ? staging::BoltJson(*r.bolt) : nlohmann::json(nullptr);
  j["bolt_chosen"] = r.bolt_chosen;
  return j;
}

}  // namespace phaseloop::runtime_search
