#include "canary/load/load_spec.h"

#include <cmath>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::canary::load {
namespace {

std::optional<LoadSpecProblem> Bad(std::string field, std::string problem) {
  return LoadSpecProblem{std::move(field), std::move(problem)};
}

bool IsKindName(const std::string& kind) {
  if (kind.empty()) return false;
  for (char c : kind) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

}  // namespace

const char* ArrivalName(Arrival arrival) {
  return arrival == Arrival::kPoisson ? "poisson" : "uniform";
}

std::optional<LoadSpecProblem> FindLoadSpecProblem(const LoadSpec& spec) {
  if (!std::isfinite(spec.rate) || spec.rate <= 0 || spec.rate > kMaxRate) {
    return Bad("rate", absl::StrCat(spec.rate, " requests/s is outside (0, ",
                                    kMaxRate, "]"));
  }
  if (!std::isfinite(spec.duration_s) || spec.duration_s < 0) {
    return Bad("duration_s", absl::StrCat(spec.duration_s,
                                          " is not a number of seconds >= 0"));
  }
  if (spec.max_requests < 0) {
    return Bad("max_requests", absl::StrCat(spec.max_requests, " is < 0"));
  }
  if (spec.duration_s == 0 && spec.max_requests == 0) {
    return Bad("duration_s",
               "a run needs a bound: give duration_s, max_requests or both");
  }
  if (!std::isfinite(spec.timeout_s) || spec.timeout_s <= 0 ||
      spec.timeout_s > 3600) {
    return Bad("timeout_ms", absl::StrCat(spec.timeout_s * 1000,
                                          " ms is outside (0, 3600000]"));
  }
  if (spec.max_in_flight < 1 || spec.max_in_flight > kMaxInFlight) {
    return Bad("max_in_flight",
               absl::StrCat(spec.max_in_flight, " is outside [1, ",
                            kMaxInFlight, "]"));
  }
  if (!std::isfinite(spec.late_threshold_s) || spec.late_threshold_s < 0) {
    return Bad("late_threshold_ms",
               absl::StrCat(spec.late_threshold_s * 1000, " ms is < 0"));
  }
  if (spec.mix.empty()) {
    return Bad("mix",
               "no request kinds; list at least one {kind, weight, "
               "payload_bytes}");
  }
  std::set<std::string> kinds;
  double total_weight = 0;
  for (size_t i = 0; i < spec.mix.size(); ++i) {
    const MixEntry& entry = spec.mix[i];
    const std::string at = absl::StrCat("mix[", i, "]");
    if (!IsKindName(entry.kind)) {
      return Bad(at + ".kind",
                 absl::StrCat("\"", entry.kind,
                              "\" is not a kind name (letters, digits, _ - "
                              ".; e.g. deflate, roundtrip, crc32)"));
    }
    if (!kinds.insert(entry.kind).second) {
      return Bad(at + ".kind", absl::StrCat("\"", entry.kind,
                                            "\" is listed twice; give each "
                                            "kind once with its weight"));
    }
    if (!std::isfinite(entry.weight) || entry.weight < 0) {
      return Bad(at + ".weight", absl::StrCat(entry.weight, " is not >= 0"));
    }
    total_weight += entry.weight;
    if (entry.min_payload_bytes < 0 ||
        entry.max_payload_bytes > kMaxPayloadBytes ||
        entry.min_payload_bytes > entry.max_payload_bytes) {
      return Bad(
          at + ".payload_bytes",
          absl::StrCat("[", entry.min_payload_bytes, ", ",
                       entry.max_payload_bytes, "] is not a range within [0, ",
                       kMaxPayloadBytes, "] with min <= max"));
    }
  }
  if (total_weight <= 0) {
    return Bad("mix", "every weight is 0; give some kind a weight > 0");
  }
  return std::nullopt;
}

absl::Status ValidateLoadSpec(const LoadSpec& spec) {
  const std::optional<LoadSpecProblem> problem = FindLoadSpecProblem(spec);
  if (!problem) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(problem->field, ": ", problem->problem));
}

}  // namespace phaseloop::canary::load
