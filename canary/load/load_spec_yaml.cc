#include "canary/load/load_spec_yaml.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace phaseloop::canary::load {
namespace {

constexpr char kSeeFile[] = "see configs/canary/load.yaml";

// Errors of one file, every field under `load.`.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  absl::Status Bad(const std::string& field, const std::string& problem) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": load", field.empty() ? "" : ".", field, ": ",
                     problem, " (", kSeeFile, ")"));
  }

  absl::Status CheckKeys(const std::string& field, const YAML::Node& node,
                         const std::set<std::string>& allowed) const {
    for (const auto& entry : node) {
      const std::string key =
          entry.first.IsScalar() ? entry.first.Scalar() : "(not a name)";
      if (allowed.count(key)) continue;
      return Bad(field.empty() ? key : absl::StrCat(field, ".", key),
                 absl::StrCat("unknown field; expected one of: ",
                              absl::StrJoin(allowed, ", ")));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<double> Number(const std::string& field,
                                const YAML::Node& node) const {
    double value = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) ||
        !std::isfinite(value)) {
      return Bad(field,
                 absl::StrCat("expected a number, got ", Describe(node)));
    }
    return value;
  }

  absl::StatusOr<int64_t> Whole(const std::string& field,
                                const YAML::Node& node) const {
    int64_t value = 0;
    if (!node.IsScalar() || !YAML::convert<int64_t>::decode(node, value) ||
        value < 0) {
      return Bad(field, absl::StrCat("expected a whole number >= 0, got ",
                                     Describe(node)));
    }
    return value;
  }

 private:
  static std::string Describe(const YAML::Node& node) {
    return node.IsScalar() ? absl::StrCat("\"", node.Scalar(), "\"")
                           : "a list or mapping";
  }

  std::string file_;
};

absl::Status ReadPayloadBytes(const Reader& r, const std::string& field,
                              const YAML::Node& node, MixEntry& entry) {
  if (node.IsScalar()) {
    auto bytes = r.Whole(field, node);
    if (!bytes.ok()) return bytes.status();
    entry.min_payload_bytes = entry.max_payload_bytes = *bytes;
  } else if (node.IsMap()) {
    if (auto s = r.CheckKeys(field, node, {"min", "max"}); !s.ok()) return s;
    if (!node["min"] || !node["max"]) {
      return r.Bad(field, "a range needs both min and max");
    }
    auto min = r.Whole(field + ".min", node["min"]);
    if (!min.ok()) return min.status();
    auto max = r.Whole(field + ".max", node["max"]);
    if (!max.ok()) return max.status();
    if (*min > *max) {
      return r.Bad(field, absl::StrCat("min ", *min, " is above max ", *max));
    }
    entry.min_payload_bytes = *min;
    entry.max_payload_bytes = *max;
  } else {
    return r.Bad(field, "expected a byte count or {min: N, max: N}");
  }
  return absl::OkStatus();
}

absl::Status ReadMix(const Reader& r, const YAML::Node& node,
                     std::vector<MixEntry>& mix) {
  if (!node.IsSequence() || node.size() == 0) {
    return r.Bad("mix",
                 "expected a list of {kind, weight, payload_bytes, seed}");
  }
  mix.clear();
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = absl::StrCat("mix[", i, "]");
    const YAML::Node item = node[i];
    if (!item.IsMap()) return r.Bad(at, "must be a mapping");
    if (auto s =
            r.CheckKeys(at, item, {"kind", "weight", "payload_bytes", "seed"});
        !s.ok()) {
      return s;
    }
    MixEntry entry;
    entry.seed = i + 1;
    if (!item["kind"] || !item["kind"].IsScalar()) {
      return r.Bad(at + ".kind",
                   "missing; name the handler kind (e.g. "
                   "deflate, roundtrip, crc32)");
    }
    entry.kind = item["kind"].Scalar();
    if (item["weight"]) {
      auto weight = r.Number(at + ".weight", item["weight"]);
      if (!weight.ok()) return weight.status();
      entry.weight = *weight;
    }
    if (item["payload_bytes"]) {
      if (auto s = ReadPayloadBytes(r, at + ".payload_bytes",
                                    item["payload_bytes"], entry);
          !s.ok()) {
        return s;
      }
    }
    if (item["seed"]) {
      auto seed = r.Whole(at + ".seed", item["seed"]);
      if (!seed.ok()) return seed.status();
      entry.seed = static_cast<uint64_t>(*seed);
    }
    mix.push_back(std::move(entry));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LoadSpec> LoadSpecFromYaml(const YAML::Node& node,
                                          const std::string& file_name) {
  const Reader r(file_name);
  if (!node || !node.IsMap()) {
    return r.Bad("", "must be a mapping of the fields below load:");
  }
  if (auto s = r.CheckKeys(
          "", node,
          {"rate", "arrival", "seed", "duration_s", "max_requests",
           "timeout_ms", "max_in_flight", "late_threshold_ms", "mix"});
      !s.ok()) {
    return s;
  }
  LoadSpec spec;
  if (node["rate"]) {
    auto rate = r.Number("rate", node["rate"]);
    if (!rate.ok()) return rate.status();
    spec.rate = *rate;
  }
  if (const YAML::Node a = node["arrival"]; a) {
    const std::string text = a.IsScalar() ? a.Scalar() : "";
    if (text == "uniform") {
      spec.arrival = Arrival::kUniform;
    } else if (text == "poisson") {
      spec.arrival = Arrival::kPoisson;
    } else {
      return r.Bad("arrival", absl::StrCat("\"", text,
                                           "\" is not an arrival process; use "
                                           "uniform or poisson"));
    }
  }
  if (node["seed"]) {
    auto seed = r.Whole("seed", node["seed"]);
    if (!seed.ok()) return seed.status();
    spec.seed = static_cast<uint64_t>(*seed);
  }
  if (node["duration_s"]) {
    auto duration = r.Number("duration_s", node["duration_s"]);
    if (!duration.ok()) return duration.status();
    spec.duration_s = *duration;
  }
  if (node["max_requests"]) {
    auto max = r.Whole("max_requests", node["max_requests"]);
    if (!max.ok()) return max.status();
    spec.max_requests = *max;
  }
  if (node["timeout_ms"]) {
    auto timeout = r.Number("timeout_ms", node["timeout_ms"]);
    if (!timeout.ok()) return timeout.status();
    spec.timeout_s = *timeout / 1000;
  }
  if (node["max_in_flight"]) {
    auto in_flight = r.Whole("max_in_flight", node["max_in_flight"]);
    if (!in_flight.ok()) return in_flight.status();
    if (*in_flight > kMaxInFlight) {
      return r.Bad("max_in_flight",
                   absl::StrCat(*in_flight, " is above ", kMaxInFlight));
    }
    spec.max_in_flight = static_cast<int>(*in_flight);
  }
  if (node["late_threshold_ms"]) {
    auto late = r.Number("late_threshold_ms", node["late_threshold_ms"]);
    if (!late.ok()) return late.status();
    spec.late_threshold_s = *late / 1000;
  }
  if (node["mix"]) {
    if (auto s = ReadMix(r, node["mix"], spec.mix); !s.ok()) return s;
  }
  // The ranges and the cross-field rules, with the same file and prefix.
  if (absl::Status s = ValidateLoadSpec(spec); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": load.", s.message(), " (", kSeeFile, ")"));
  }
  return spec;
}

absl::StatusOr<LoadSpec> LoadSpecFromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path,
                     ": cannot read the load config; check the path (e.g. "
                     "configs/canary/load.yaml)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not valid YAML: ", e.what()));
  }
  if (!root.IsMap() || !root["load"]) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": no load: section at the top level (", kSeeFile, ")"));
  }
  return LoadSpecFromYaml(root["load"], path);
}

}  // namespace phaseloop::canary::load
