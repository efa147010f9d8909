#include "canary/load/load_report.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace phaseloop::canary::load {
namespace {

using Json = nlohmann::ordered_json;

Json SummaryJson(const LatencySummary& s) {
  return Json{{"p50", s.p50 * 1e3},
              {"p90", s.p90 * 1e3},
              {"p95", s.p95 * 1e3},
              {"p99", s.p99 * 1e3},
              {"max", s.max * 1e3}};
}

Json TargetJson(const LoadResults& all, const TargetResults& r) {
  Json errors = Json::object();
  for (const auto& [reason, count] : r.errors) errors[reason] = count;
  return Json{{"intended", r.intended},
              {"sent", r.sent},
              {"ok", r.ok},
              {"errors", errors},
              {"error_count", r.error_count()},
              {"latency_ms", SummaryJson(Summarize(r.latency))},
              {"achieved_rate", all.AchievedRate(r)},
              {"late_starts", r.late_starts},
              {"start_delay_ms", SummaryJson(Summarize(r.start_delay))}};
}

std::string Row(const LoadResults& all, const TargetResults& r,
                const std::string& address, const std::string& weight) {
  const LatencySummary s = Summarize(r.latency);
  return absl::StrFormat(
      "%-10s %-21s %6s %9d %9d %9d %7d %8.2f %8.2f %8.2f %8.2f %8.2f %8.1f "
      "%6d\n",
      r.name, address, weight, r.intended, r.sent, r.ok, r.error_count(),
      s.p50 * 1e3, s.p90 * 1e3, s.p95 * 1e3, s.p99 * 1e3, s.max * 1e3,
      all.AchievedRate(r), r.late_starts);
}

}  // namespace

std::string ProgressLine(const LoadResults& results) {
  const TargetResults& r = results.overall;
  return absl::StrFormat("%.1f s: sent %d, done %d, errors %d, p95 %.2f ms",
                         results.elapsed_s, r.sent, r.done(), r.error_count(),
                         Summarize(r.latency).p95 * 1e3);
}

std::string ResultsTable(const LoadResults& results,
                         const std::vector<Target>& targets) {
  std::string out = absl::StrFormat(
      "%-10s %-21s %6s %9s %9s %9s %7s %8s %8s %8s %8s %8s %8s %6s\n", "target",
      "address", "weight", "intended", "sent", "ok", "errors", "p50_ms",
      "p90_ms", "p95_ms", "p99_ms", "max_ms", "rate/s", "late");
  for (size_t i = 0; i < results.targets.size() && i < targets.size(); ++i) {
    absl::StrAppend(&out,
                    Row(results, results.targets[i],
                        absl::StrCat(targets[i].host, ":", targets[i].port),
                        absl::StrFormat("%g", targets[i].weight)));
  }
  absl::StrAppend(&out, Row(results, results.overall, "", ""));
  for (const TargetResults& r : results.targets) {
    if (r.errors.empty()) continue;
    absl::StrAppend(&out, "errors of ", r.name, ": ",
                    absl::StrJoin(r.errors, ", ", absl::PairFormatter(" ")),
                    "\n");
  }
  const LatencySummary delay = Summarize(results.overall.start_delay);
  absl::StrAppend(
      &out,
      absl::StrFormat("late starts: %d of %d sent (start delay p99 %.2f ms, "
                      "max %.2f ms); latencies count from the intended send "
                      "time over %.1f s\n",
                      results.overall.late_starts, results.overall.sent,
                      delay.p99 * 1e3, delay.max * 1e3, results.elapsed_s));
  return out;
}

std::string ResultsJson(const LoadResults& results,
                        const std::vector<Target>& targets,
                        const LoadSpec& spec) {
  Json mix = Json::array();
  for (const MixEntry& e : spec.mix) {
    mix.push_back(Json{{"kind", e.kind},
                       {"weight", e.weight},
                       {"min_payload_bytes", e.min_payload_bytes},
                       {"max_payload_bytes", e.max_payload_bytes},
                       {"seed", e.seed}});
  }
  Json out{{"elapsed_s", results.elapsed_s},
           {"spec", Json{{"rate", spec.rate},
                         {"arrival", ArrivalName(spec.arrival)},
                         {"seed", spec.seed},
                         {"duration_s", spec.duration_s},
                         {"max_requests", spec.max_requests},
                         {"timeout_ms", spec.timeout_s * 1e3},
                         {"max_in_flight", spec.max_in_flight},
                         {"mix", mix}}}};
  Json list = Json::array();
  for (size_t i = 0; i < results.targets.size() && i < targets.size(); ++i) {
    Json t{{"name", targets[i].name},
           {"address", absl::StrCat(targets[i].host, ":", targets[i].port)},
           {"weight", targets[i].weight}};
    t.update(TargetJson(results, results.targets[i]));
    list.push_back(std::move(t));
  }
  out["targets"] = std::move(list);
  out["overall"] = TargetJson(results, results.overall);
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace phaseloop::canary::load
