#include "compiler_driver/cc_wrapper/decision_stats.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace phaseloop::cc_wrapper {
namespace {

using Json = nlohmann::ordered_json;

// `{"a": 1, "b": {"c": 2}}`: one line, a space after ':' and ',' (scripts
// grep for `"optimized": N`).
std::string OneLine(const Json& j) {
  if (j.is_object()) {
    std::string out = "{";
    const char* sep = "";
    for (const auto& [key, value] : j.items()) {
      absl::StrAppend(&out, sep,
                      Json(key).dump(-1, ' ', false,
                                     nlohmann::json::error_handler_t::replace),
                      ": ", OneLine(value));
      sep = ", ";
    }
    return out + "}";
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Ms(int64_t us) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", us / 1000.0);
  return buffer;
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %%", 100.0 * part / whole);
  return buffer;
}

std::string Bytes(int64_t bytes) {
  char buffer[32];
  if (bytes >= (int64_t{1} << 20)) {
    std::snprintf(buffer, sizeof buffer, "%.1f MiB", bytes / 1048576.0);
  } else if (bytes >= 1024) {
    std::snprintf(buffer, sizeof buffer, "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buffer, sizeof buffer, "%lld B",
                  static_cast<long long>(bytes));
  }
  return buffer;
}

}  // namespace

int64_t Percentile(std::vector<int64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * (values.size() - 1))];
}

void AddSpool(const SpoolContents& contents, int64_t since_ms,
              DecisionStats* s) {
  s->corrupt_files += static_cast<int64_t>(contents.corrupt.size());
  for (const SpoolFile& file : contents.files) {
    int64_t invocation_us = 0;
    for (const v1::Decision& d : file.batch.decisions()) {
      if (since_ms > 0 && d.unix_time_ms() <= since_ms) continue;
      if (!d.decision_id().empty() &&
          !s->seen_decisions.insert(d.decision_id()).second) {
        ++s->duplicate_records;
        continue;
      }
      ++s->records;
      if (!file.shipped) ++s->unshipped;
      const std::string outcome = OutcomeName(d.outcome());
      ++s->by_outcome[outcome];
      if (!d.reason().empty()) ++s->by_reason[{outcome, d.reason()}];
      invocation_us = std::max(invocation_us, d.compile_time_us());
      s->optimize_us += d.optimize_time_us();
      s->policy_us += d.policy_time_us();
      if (d.outcome() != v1::OPTIMIZED) continue;
      if (d.outcome_cache() == "hit") ++s->outcome_cache_hits;
      if (d.outcome_cache() == "miss") ++s->outcome_cache_misses;
      ++s->optimized_by_policy[d.policy_version()];
      s->optimized_compile_us.push_back(d.compile_time_us());
      s->optimized_optimize_us.push_back(d.optimize_time_us());
      s->optimized_policy_us.push_back(d.policy_time_us());
      if (d.has_oz_alloc_size() && d.has_alloc_size()) {
        ++s->vs_oz_objects;
        s->vs_oz_oz_bytes += d.oz_alloc_size();
        s->vs_oz_chosen_bytes += d.alloc_size();
        if (d.alloc_size() > d.oz_alloc_size()) ++s->larger_than_oz;
      } else {
        ++s->not_measured;
        s->not_measured_bytes += d.alloc_size();
      }
    }
    if (invocation_us > 0) {
      ++s->timed_invocations;
      s->wrapper_us += invocation_us;
    }
  }
}

void AddBufferCounts(
    const std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>&
        counts,
    DecisionStats* s) {
  for (const auto& [key, count] : counts) {
    s->records += count;
    s->by_outcome[key.first] += count;
    if (!key.second.empty()) s->by_reason[key] += count;
  }
}

void PrintStatsTable(const DecisionStats& s, const std::string& spool,
                     std::ostream& out) {
  out << "phaseloop-cc decisions in " << spool
      << (s.buffer.empty() ? "" : " and " + s.buffer) << ": " << s.records
      << " records (" << s.unshipped << " not shipped yet)";
  if (s.zeroed_at_ms > 0) out << ", spool counted since the last --zero";
  out << "\n\n";
  out << std::left << std::setw(20) << "outcome" << std::setw(28) << "reason"
      << std::right << std::setw(8) << "count"
      << "\n";
  for (const auto& [outcome, count] : s.by_outcome) {
    out << std::left << std::setw(20) << outcome << std::setw(28) << "(all)"
        << std::right << std::setw(8) << count << "\n";
    for (const auto& [key, n] : s.by_reason) {
      if (key.first != outcome) continue;
      out << std::left << std::setw(20) << "" << std::setw(28) << key.second
          << std::right << std::setw(8) << n << "\n";
    }
  }
  out << std::left << std::setw(20) << "dropped" << std::setw(28)
      << "spool_full_of_unshipped" << std::right << std::setw(8)
      << s.dropped_records << "\n";
  out << std::left << std::setw(20) << "failed" << std::setw(28)
      << "spool_write_failed" << std::right << std::setw(8) << s.failed_records
      << "\n";

  const int64_t optimized =
      s.by_outcome.count("optimized") ? s.by_outcome.at("optimized") : 0;
  out << "\nbytes (whole objects: every allocated section), " << optimized
      << " optimized:\n";
  if (s.vs_oz_objects > 0) {
    const int64_t saved = s.vs_oz_oz_bytes - s.vs_oz_chosen_bytes;
    out << "  measured against -Oz (topk): " << s.vs_oz_objects << " objects, "
        << s.vs_oz_oz_bytes << " -> " << s.vs_oz_chosen_bytes
        << " bytes, saved " << saved << " (" << Percent(saved, s.vs_oz_oz_bytes)
        << ")"
        << (s.larger_than_oz > 0
                ? absl::StrCat(", ", s.larger_than_oz, " larger than -Oz")
                : "")
        << "\n";
  } else {
    out << "  measured against -Oz (topk): none\n";
  }
  out << "  not measured (no -Oz object to compare: single mode, fixed, "
         "table, baseline): "
      << s.not_measured << " objects\n";
  if (s.outcome_cache_hits + s.outcome_cache_misses > 0) {
    out << "  topk outcome cache: " << s.outcome_cache_hits
        << " choices from the cache (one pipeline each), "
        << s.outcome_cache_misses << " measured and stored\n";
  }

  out << "\ntime in phaseloop-cc-opt (" << s.timed_invocations
      << " invocations): " << Ms(s.wrapper_us) << "; optimiser (policy, "
      << "passes, codegen) " << Ms(s.optimize_us) << " ("
      << Percent(s.optimize_us, s.wrapper_us) << "); policy decision "
      << Ms(s.policy_us) << " (" << Percent(s.policy_us, s.wrapper_us) << ")\n";
  if (!s.optimized_compile_us.empty()) {
    out << "optimized translation units, p50 / p90: whole wrapper "
        << Ms(Percentile(s.optimized_compile_us, 0.5)) << " / "
        << Ms(Percentile(s.optimized_compile_us, 0.9)) << ", optimiser "
        << Ms(Percentile(s.optimized_optimize_us, 0.5)) << " / "
        << Ms(Percentile(s.optimized_optimize_us, 0.9)) << ", policy "
        << Percentile(s.optimized_policy_us, 0.5) << " / "
        << Percentile(s.optimized_policy_us, 0.9) << " us\n";
  }
  if (!s.optimized_by_policy.empty()) {
    out << "\noptimized translation units by policy_version:\n";
    for (const auto& [version, count] : s.optimized_by_policy) {
      out << "  " << std::left << std::setw(34)
          << (version.empty() ? "(none)" : version) << std::right
          << std::setw(8) << count << "\n";
    }
  }
  out << "\nspool: " << Bytes(s.space.bytes) << " of "
      << (s.max_size > 0 ? Bytes(s.max_size) : "no cap") << " ("
      << Bytes(s.space.shipped_bytes)
      << " shipped, kept for stats until space is needed); " << s.evicted_files
      << " shipped files evicted\n";
  if (s.dropped_records > 0) {
    out << "warning: " << s.dropped_records
        << " records were dropped because the spool was full of unshipped "
           "records: run phaseloop decisions ship, or raise max_size\n";
  }
  if (s.failed_records > 0) {
    out << "warning: " << s.failed_records
        << " records could not be written to the spool (disk full, or no "
           "permission): free space or fix the spool directory's "
           "permissions; PHASELOOP_VERBOSE=1 shows the error on each "
           "compile\n";
  }
  if (s.corrupt_files > 0) {
    out << s.corrupt_files << " unreadable spool files left in place\n";
  }
  if (s.duplicate_records > 0) {
    out << s.duplicate_records
        << " records met twice (a spool file copied or concatenated) were "
           "counted once\n";
  }
}

void PrintStatsJson(const DecisionStats& s, const std::string& spool,
                    std::ostream& out) {
  Json j;
  j["spool"] = spool;
  j["records"] = s.records;
  j["unshipped_records"] = s.unshipped;
  j["corrupt_files"] = s.corrupt_files;
  j["duplicate_records"] = s.duplicate_records;
  j["by_outcome"] = Json::object();
  for (const auto& [outcome, count] : s.by_outcome) {
    j["by_outcome"][outcome] = count;
  }
  j["dropped_records"] = s.dropped_records;
  j["failed_records"] = s.failed_records;
  Json reasons = Json::object();
  for (const auto& [key, count] : s.by_reason) {
    reasons[key.second] = reasons.value(key.second, int64_t{0}) + count;
  }
  j["by_reason"] = reasons;
  Json by_outcome_reason = Json::object();
  for (const auto& [key, count] : s.by_reason) {
    by_outcome_reason[key.first][key.second] = count;
  }
  j["by_outcome_reason"] = by_outcome_reason;
  j["optimized_by_policy"] = Json::object();
  for (const auto& [version, count] : s.optimized_by_policy) {
    j["optimized_by_policy"][version] = count;
  }
  j["bytes"] = {
      {"measured_vs_oz", s.vs_oz_objects},
      {"oz_alloc_size", s.vs_oz_oz_bytes},
      {"alloc_size", s.vs_oz_chosen_bytes},
      {"saved", s.vs_oz_oz_bytes - s.vs_oz_chosen_bytes},
      {"larger_than_oz", s.larger_than_oz},
      {"not_measured", s.not_measured},
      {"not_measured_alloc_size", s.not_measured_bytes},
  };
  j["outcome_cache"] = {{"hits", s.outcome_cache_hits},
                        {"misses", s.outcome_cache_misses}};
  j["time_us"] = {{"invocations", s.timed_invocations},
                  {"wrapper", s.wrapper_us},
                  {"optimize", s.optimize_us},
                  {"policy", s.policy_us}};
  Json percentiles = Json::object();
  for (const auto& [name, values] :
       {std::pair<const char*, const std::vector<int64_t>*>{
            "compile", &s.optimized_compile_us},
        {"optimize", &s.optimized_optimize_us},
        {"policy", &s.optimized_policy_us}}) {
    percentiles[name] = {{"p50", Percentile(*values, 0.5)},
                         {"p90", Percentile(*values, 0.9)}};
  }
  j["optimized_time_us"] = percentiles;
  j["space"] = {{"bytes", s.space.bytes},
                {"shipped_bytes", s.space.shipped_bytes},
                {"max_size", s.max_size},
                {"evicted_files", s.evicted_files}};
  j["zeroed_at_ms"] = s.zeroed_at_ms;
  if (!s.buffer.empty()) j["buffer"] = s.buffer;
  out << OneLine(j) << "\n";
}

}  // namespace phaseloop::cc_wrapper
