#include "canary/load/load_spec_yaml.h"

#include <yaml-cpp/yaml.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/config/yaml_fields.h"

namespace phaseloop::canary::load {
namespace {

using config::YamlFields;

constexpr char kDocs[] = "configs/canary/load.yaml";

absl::Status ReadPayloadBytes(const YamlFields& f, const std::string& field,
                              const YAML::Node& node, MixEntry& entry) {
  if (node.IsScalar()) {
    auto bytes = f.IntValue(field, node, 0, YamlFields::kNoUpperEnd);
    if (!bytes.ok()) return bytes.status();
    entry.min_payload_bytes = entry.max_payload_bytes = *bytes;
  } else if (node.IsMap()) {
    if (auto s = f.CheckKeys(field, node, {"min", "max"}); !s.ok()) return s;
    if (!node["min"] || !node["max"]) {
      return f.Bad(field, "a range needs both min and max");
    }
    auto min =
        f.IntValue(field + ".min", node["min"], 0, YamlFields::kNoUpperEnd);
    if (!min.ok()) return min.status();
    auto max =
        f.IntValue(field + ".max", node["max"], 0, YamlFields::kNoUpperEnd);
    if (!max.ok()) return max.status();
    if (*min > *max) {
      return f.Bad(field, absl::StrCat("min ", *min, " is above max ", *max));
    }
    entry.min_payload_bytes = *min;
    entry.max_payload_bytes = *max;
  } else {
    return f.Bad(field, "expected a byte count or {min: N, max: N}");
  }
  return absl::OkStatus();
}

absl::Status ReadMix(const YamlFields& f, const YAML::Node& node,
                     std::vector<MixEntry>& mix) {
  if (!node.IsSequence() || node.size() == 0) {
    return f.Bad("load.mix",
                 "expected a list of {kind, weight, payload_bytes, seed}");
  }
  mix.clear();
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = absl::StrCat("load.mix[", i, "]");
    const YAML::Node item = node[i];
    if (auto s =
            f.CheckKeys(at, item, {"kind", "weight", "payload_bytes", "seed"});
        !s.ok()) {
      return s;
    }
    MixEntry entry;
    entry.seed = i + 1;
    if (!item["kind"] || !item["kind"].IsScalar()) {
      return f.Bad(at + ".kind",
                   "missing; name the handler kind (e.g. "
                   "deflate, roundtrip, crc32)");
    }
    entry.kind = item["kind"].Scalar();
    if (auto s =
            f.Number(at, item, "weight", config::NumberRange(), entry.weight);
        !s.ok()) {
      return s;
    }
    if (item["payload_bytes"]) {
      if (auto s = ReadPayloadBytes(f, at + ".payload_bytes",
                                    item["payload_bytes"], entry);
          !s.ok()) {
        return s;
      }
    }
    if (auto s =
            f.Int(at, item, "seed", 0, YamlFields::kNoUpperEnd, entry.seed);
        !s.ok()) {
      return s;
    }
    mix.push_back(std::move(entry));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LoadSpec> LoadSpecFromYaml(const YAML::Node& node,
                                          const std::string& file_name) {
  const YamlFields f(file_name, kDocs);
  if (!node || !node.IsMap()) {
    return f.Bad("load", "expected a mapping of the fields below load:");
  }
  if (auto s = f.CheckKeys(
          "load", node,
          {"rate", "arrival", "seed", "duration_s", "max_requests",
           "timeout_ms", "max_in_flight", "late_threshold_ms", "mix"});
      !s.ok()) {
    return s;
  }
  // Ranges are FindLoadSpecProblem's (below); here only the kinds of value.
  const config::NumberRange any;
  LoadSpec spec;
  if (auto s = f.Number("load", node, "rate", any, spec.rate); !s.ok()) {
    return s;
  }
  std::string arrival =
      spec.arrival == Arrival::kPoisson ? "poisson" : "uniform";
  if (auto s = f.Choice("load", node, "arrival",
                        {{"uniform", ""}, {"poisson", ""}}, arrival);
      !s.ok()) {
    return s;
  }
  spec.arrival = arrival == "poisson" ? Arrival::kPoisson : Arrival::kUniform;
  if (auto s =
          f.Int("load", node, "seed", 0, YamlFields::kNoUpperEnd, spec.seed);
      !s.ok()) {
    return s;
  }
  if (auto s = f.Number("load", node, "duration_s", any, spec.duration_s);
      !s.ok()) {
    return s;
  }
  if (auto s = f.Int("load", node, "max_requests", 0, YamlFields::kNoUpperEnd,
                     spec.max_requests);
      !s.ok()) {
    return s;
  }
  double timeout_ms = spec.timeout_s * 1000;
  if (auto s = f.Number("load", node, "timeout_ms", any, timeout_ms); !s.ok()) {
    return s;
  }
  spec.timeout_s = timeout_ms / 1000;
  if (auto s = f.Int("load", node, "max_in_flight", 0, kMaxInFlight,
                     spec.max_in_flight);
      !s.ok()) {
    return s;
  }
  double late_ms = spec.late_threshold_s * 1000;
  if (auto s = f.Number("load", node, "late_threshold_ms", any, late_ms);
      !s.ok()) {
    return s;
  }
  spec.late_threshold_s = late_ms / 1000;
  if (node["mix"]) {
    if (auto s = ReadMix(f, node["mix"], spec.mix); !s.ok()) return s;
  }
  // The ranges and the cross-field rules, named as above.
  if (auto problem = FindLoadSpecProblem(spec)) {
    return f.Bad("load." + problem->field, problem->problem);
  }
  return spec;
}

absl::StatusOr<LoadSpec> LoadSpecFromFile(const std::string& path) {
  const YamlFields f(path, kDocs);
  auto root = f.LoadMapping();
  if (!root.ok()) return root.status();
  if (!(*root)["load"]) {
    return f.Bad("(top)", "no load: section at the top level");
  }
  if (auto s = f.CheckKeys("", *root, {"load"}); !s.ok()) return s;
  return LoadSpecFromYaml((*root)["load"], path);
}

}  // namespace phaseloop::canary::load
