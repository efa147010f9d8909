#include "reward_engine/slo/slo_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_documents.h"
#include "common/config/yaml_keys.h"

namespace phaseloop::slo {
namespace {

// Where an error is: "FILE: document N (SLO NAME)".
struct Where {
  std::string source;
  int document = 0;
  std::string name;
  std::string Prefix() const {
    std::string p = absl::StrCat(source, ": document ", document);
    if (!name.empty()) absl::StrAppend(&p, " (SLO \"", name, "\")");
    return p;
  }
};

absl::Status Bad(const Where& where, const std::string& field,
                 const std::string& problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(where.Prefix(), ": ", field, ": ", problem));
}

// Rejects keys of `node` (a map) not in `allowed`; `hints` explain keys that
// are valid OpenSLO but not supported here.
absl::Status CheckKeys(const Where& where, const std::string& field,
                       const YAML::Node& node,
                       const std::set<std::string>& allowed,
                       const std::map<std::string, std::string>& hints = {}) {
  for (const auto& entry : node) {
    const std::string key = config::MappingKeyText(entry.first);
    if (allowed.count(key)) continue;
    const std::string path =
        field.empty() ? key : absl::StrCat(field, ".", key);
    auto hint = hints.find(key);
    if (hint != hints.end()) return Bad(where, path, hint->second);
    return Bad(where, path,
               absl::StrCat("unknown field; expected one of: ",
                            absl::StrJoin(allowed, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<YAML::Node> RequireMap(const Where& where,
                                      const std::string& field,
                                      const YAML::Node& parent,
                                      const std::string& key) {
  const YAML::Node node = parent[key];
  if (!node)
    return Bad(where, field,
               "missing; add it (see configs/slo/demo-service.yaml)");
  if (!node.IsMap()) return Bad(where, field, "must be a mapping");
  return node;
}

absl::StatusOr<std::string> RequireString(const Where& where,
                                          const std::string& field,
                                          const YAML::Node& parent,
                                          const std::string& key) {
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) {
    return Bad(where, field,
               "missing; add it (see configs/slo/demo-service.yaml)");
  }
  if (!node.IsScalar() || node.Scalar().empty()) {
    return Bad(where, field, "must be a non-empty string");
  }
  return node.Scalar();
}

absl::StatusOr<double> ToDouble(const Where& where, const std::string& field,
                                const YAML::Node& node) {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) ||
      !std::isfinite(value)) {
    return Bad(
        where, field,
        absl::StrCat("expected a number, got \"",
                     node.IsScalar() ? node.Scalar() : "a collection", "\""));
  }
  return value;
}

bool IsRfc1123Name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return name.front() != '-' && name.back() != '-';
}

absl::Status ParseIndicator(const Where& where, const YAML::Node& spec) {
  if (spec["indicatorRef"]) {
    return Bad(where, "spec.indicatorRef",
               "SLI references are not supported; inline the indicator "
               "(spec.indicator with spec.thresholdMetric)");
  }
  auto indicator = RequireMap(where, "spec.indicator", spec, "indicator");
  if (!indicator.ok()) return indicator.status();
  if (auto s =
          CheckKeys(where, "spec.indicator", *indicator, {"metadata", "spec"});
      !s.ok()) {
    return s;
  }
  auto sli = RequireMap(where, "spec.indicator.spec", *indicator, "spec");
  if (!sli.ok()) return sli.status();
  if (auto s = CheckKeys(
          where, "spec.indicator.spec", *sli,
          {"description", "thresholdMetric"},
          {{"ratioMetric",
            "ratio SLIs are not supported; phaseloop's SLI is a latency "
            "threshold: use thresholdMetric and put op/value in the "
            "objective"}});
      !s.ok()) {
    return s;
  }
  const std::string tm_field = "spec.indicator.spec.thresholdMetric";
  auto threshold_metric = RequireMap(where, tm_field, *sli, "thresholdMetric");
  if (!threshold_metric.ok()) return threshold_metric.status();
  if (auto s = CheckKeys(where, tm_field, *threshold_metric, {"metricSource"});
      !s.ok()) {
    return s;
  }
  const std::string ms_field = tm_field + ".metricSource";
  auto source = RequireMap(where, ms_field, *threshold_metric, "metricSource");
  if (!source.ok()) return source.status();
  if (auto s = CheckKeys(where, ms_field, *source,
                         {"type", "metricSourceRef", "spec"});
      !s.ok()) {
    return s;
  }
  auto type = RequireString(where, ms_field + ".type", *source, "type");
  if (!type.ok()) return type.status();
  if (*type != "phaseloop") {
    return Bad(where, ms_field + ".type",
               absl::StrCat("\"", *type,
                            "\" is not supported; use \"phaseloop\" (the SLI "
                            "windows services publish to Kafka)"));
  }
  if (const YAML::Node source_spec = (*source)["spec"]; source_spec) {
    if (!source_spec.IsMap())
      return Bad(where, ms_field + ".spec", "must be a mapping");
    if (auto s =
            CheckKeys(where, ms_field + ".spec", source_spec, {"quantile"});
        !s.ok()) {
      return s;
    }
    if (source_spec["quantile"]) {
      auto q =
          ToDouble(where, ms_field + ".spec.quantile", source_spec["quantile"]);
      if (!q.ok()) return q.status();
      if (*q != 0.95) {
        return Bad(where, ms_field + ".spec.quantile",
                   "only 0.95 is supported (the reward is log(SLO / p95)); "
                   "set it to 0.95 or remove it");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ParseTimeWindow(const Where& where, const YAML::Node& spec,
                             Slo& slo) {
  const YAML::Node windows = spec["timeWindow"];
  if (!windows) {
    return Bad(where, "spec.timeWindow",
               "missing; add [{duration: 30d, isRolling: true}]");
  }
  if (!windows.IsSequence() || windows.size() != 1) {
    return Bad(where, "spec.timeWindow",
               "must be a list of exactly one window, e.g. [{duration: 30d, "
               "isRolling: true}]");
  }
  const YAML::Node window = windows[0];
  const std::string field = "spec.timeWindow[0]";
  if (!window.IsMap()) return Bad(where, field, "must be a mapping");
  if (auto s = CheckKeys(where, field, window, {"duration", "isRolling"},
                         {{"calendar",
                           "calendar windows are not supported; use a "
                           "rolling window (isRolling: true)"}});
      !s.ok()) {
    return s;
  }
  const YAML::Node rolling = window["isRolling"];
  bool is_rolling = false;
  if (!rolling || !rolling.IsScalar() ||
      !YAML::convert<bool>::decode(rolling, is_rolling) || !is_rolling) {
    return Bad(where, field + ".isRolling",
               "only rolling windows are supported; set isRolling: true");
  }
  auto duration = RequireString(where, field + ".duration", window, "duration");
  if (!duration.ok()) return duration.status();
  auto ms = ParseDurationMs(*duration);
  if (!ms.ok()) {
    return Bad(where, field + ".duration", std::string(ms.status().message()));
  }
  if (*ms < 60 * 60 * 1000) {
    return Bad(where, field + ".duration",
               absl::StrCat("\"", *duration,
                            "\" is shorter than 1h; SLO windows are days "
                            "long, e.g. 30d"));
  }
  slo.window_ms = *ms;
  return absl::OkStatus();
}

absl::Status ParseObjective(const Where& where, const YAML::Node& spec,
                            Slo& slo) {
  const YAML::Node objectives = spec["objectives"];
  if (!objectives) {
    return Bad(where, "spec.objectives",
               "missing; add [{op: lte, value: 250, target: 0.99}]");
  }
  if (!objectives.IsSequence() || objectives.size() != 1) {
    return Bad(where, "spec.objectives",
               "must be a list of exactly one objective; write one SLO per "
               "objective");
  }
  const YAML::Node objective = objectives[0];
  const std::string field = "spec.objectives[0]";
  if (!objective.IsMap()) return Bad(where, field, "must be a mapping");
  if (auto s =
          CheckKeys(where, field, objective,
                    {"displayName", "op", "value", "target", "targetPercent",
                     "timeSliceTarget", "timeSliceWindow"});
      !s.ok()) {
    return s;
  }
  auto op = RequireString(where, field + ".op", objective, "op");
  if (!op.ok()) return op.status();
  if (*op != "lte") {
    return Bad(where, field + ".op",
               absl::StrCat("\"", *op,
                            "\" is not supported; a latency threshold is "
                            "met when latency <= value: use lte"));
  }
  if (!objective["value"]) {
    return Bad(where, field + ".value",
               "missing threshold; add the latency threshold in "
               "milliseconds, e.g. value: 250");
  }
  auto value = ToDouble(where, field + ".value", objective["value"]);
  if (!value.ok()) return value.status();
  if (*value <= 0) {
    return Bad(where, field + ".value",
               "the threshold must be > 0 milliseconds");
  }
  slo.threshold_ms = *value;

  const bool has_target = static_cast<bool>(objective["target"]);
  const bool has_percent = static_cast<bool>(objective["targetPercent"]);
  if (has_target == has_percent) {
    return Bad(where, field + ".target",
               "give exactly one of target (a fraction, e.g. 0.99) or "
               "targetPercent (e.g. 99)");
  }
  if (has_target) {
    auto target = ToDouble(where, field + ".target", objective["target"]);
    if (!target.ok()) return target.status();
    if (!(*target > 0 && *target < 1)) {
      return Bad(where, field + ".target",
                 absl::StrCat(*target,
                              " is outside (0, 1); write a fraction, e.g. "
                              "0.99 (or targetPercent: 99)"));
    }
    slo.target = *target;
  } else {
    auto percent =
        ToDouble(where, field + ".targetPercent", objective["targetPercent"]);
    if (!percent.ok()) return percent.status();
    if (!(*percent > 0 && *percent < 100)) {
      return Bad(where, field + ".targetPercent",
                 absl::StrCat(*percent, " is outside (0, 100), e.g. 99"));
    }
    slo.target = *percent / 100;
  }

  if (objective["timeSliceTarget"]) {
    if (slo.budgeting_method != kTimeslices) {
      return Bad(where, field + ".timeSliceTarget",
                 "only meaningful with budgetingMethod: Timeslices; remove it");
    }
    auto tst = ToDouble(where, field + ".timeSliceTarget",
                        objective["timeSliceTarget"]);
    if (!tst.ok()) return tst.status();
    if (!(*tst > 0 && *tst <= 1)) {
      return Bad(where, field + ".timeSliceTarget",
                 absl::StrCat(*tst, " is outside (0, 1]; e.g. 0.95"));
    }
    slo.time_slice_target = *tst;
  }
  if (objective["timeSliceWindow"]) {
    auto w = RequireString(where, field + ".timeSliceWindow", objective,
                           "timeSliceWindow");
    if (!w.ok()) return w.status();
    if (auto ms = ParseDurationMs(*w); !ms.ok()) {
      return Bad(where, field + ".timeSliceWindow",
                 std::string(ms.status().message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Slo> ParseDocument(const YAML::Node& doc, Where& where) {
  if (!doc.IsMap()) return Bad(where, "(document)", "must be a mapping");
  if (auto s =
          CheckKeys(where, "", doc, {"apiVersion", "kind", "metadata", "spec"});
      !s.ok()) {
    return s;
  }
  auto api = RequireString(where, "apiVersion", doc, "apiVersion");
  if (!api.ok()) return api.status();
  if (*api != "openslo/v1") {
    return Bad(where, "apiVersion",
               absl::StrCat("\"", *api,
                            "\" is not supported; use apiVersion: openslo/v1"));
  }
  auto kind = RequireString(where, "kind", doc, "kind");
  if (!kind.ok()) return kind.status();
  if (*kind != "SLO") {
    return Bad(where, "kind",
               absl::StrCat("\"", *kind,
                            "\" is not supported; only kind: SLO is read "
                            "(put other OpenSLO objects elsewhere)"));
  }
  auto metadata = RequireMap(where, "metadata", doc, "metadata");
  if (!metadata.ok()) return metadata.status();
  Slo slo;
  auto name = RequireString(where, "metadata.name", *metadata, "name");
  if (!name.ok()) return name.status();
  if (!IsRfc1123Name(*name)) {
    return Bad(where, "metadata.name",
               absl::StrCat("\"", *name,
                            "\" is not a valid name: at most 63 lowercase "
                            "letters, digits or '-', starting and ending "
                            "with a letter or digit"));
  }
  slo.name = *name;
  where.name = slo.name;
  if (const YAML::Node display = (*metadata)["displayName"]; display) {
    if (!display.IsScalar()) {
      return Bad(where, "metadata.displayName", "must be a string");
    }
    slo.display_name = display.Scalar();
  }

  auto spec = RequireMap(where, "spec", doc, "spec");
  if (!spec.ok()) return spec.status();
  if (auto s = CheckKeys(
          where, "spec", *spec,
          {"description", "service", "indicator", "indicatorRef", "timeWindow",
           "budgetingMethod", "objectives"},
          {{"alertPolicies",
            "alert policies are not supported; phaseloop computes the "
            "multiwindow burn-rate alerts itself: remove it"}});
      !s.ok()) {
    return s;
  }
  auto service = RequireString(where, "spec.service", *spec, "service");
  if (!service.ok()) return service.status();
  if (service->find('/') != std::string::npos) {
    return Bad(where, "spec.service",
               absl::StrCat("\"", *service,
                            "\" contains '/', which Kafka keys use as a "
                            "separator; rename the service"));
  }
  slo.service = *service;

  auto method =
      RequireString(where, "spec.budgetingMethod", *spec, "budgetingMethod");
  if (!method.ok()) return method.status();
  if (*method != kOccurrences && *method != kTimeslices) {
    return Bad(where, "spec.budgetingMethod",
               absl::StrCat("\"", *method,
                            "\" is not supported; use Occurrences or "
                            "Timeslices"));
  }
  slo.budgeting_method = *method;

  if (auto s = ParseIndicator(where, *spec); !s.ok()) return s;
  if (auto s = ParseTimeWindow(where, *spec, slo); !s.ok()) return s;
  if (auto s = ParseObjective(where, *spec, slo); !s.ok()) return s;
  if (slo.budgeting_method == kTimeslices && slo.time_slice_target == 0) {
    slo.time_slice_target = slo.target;
  }
  slo.source = where.source;
  return slo;
}

absl::Status CheckDuplicates(const std::vector<Slo>& slos) {
  std::map<std::pair<std::string, std::string>, const Slo*> seen;
  for (const Slo& slo : slos) {
    auto [it, inserted] =
        seen.emplace(std::make_pair(slo.service, slo.name), &slo);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          slo.source, ": SLO \"", slo.name, "\" of service \"", slo.service,
          "\" is already defined in ", it->second->source,
          "; rename one of them (metadata.name must be unique per service)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> ParseDurationMs(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  const std::string help =
      "; write a positive integer and a unit s, m, h, d or w, e.g. 30d";
  if (digits == 0 || digits + 1 != text.size() || digits > 9) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad duration \"", text, "\"", help));
  }
  const int64_t count = std::stoll(text.substr(0, digits));
  int64_t unit_ms = 0;
  switch (text.back()) {
    case 's':
      unit_ms = 1000;
      break;
    case 'm':
      unit_ms = 60 * 1000;
      break;
    case 'h':
      unit_ms = 60 * 60 * 1000;
      break;
    case 'd':
      unit_ms = 24 * 60 * 60 * 1000;
      break;
    case 'w':
      unit_ms = 7 * 24 * 60 * 60 * 1000;
      break;
    case 'M':
    case 'Q':
    case 'Y':
      return absl::InvalidArgumentError(
          absl::StrCat("duration \"", text,
                       "\": months, quarters and years are calendar units, not "
                       "supported for rolling windows; use days, e.g. 30d"));
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("bad duration \"", text, "\"", help));
  }
  if (count <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration \"", text, "\" must be positive", help));
  }
  return count * unit_ms;
}

std::string FormatDurationMs(int64_t ms) {
  // Days rather than weeks: SLO windows read as 28d / 30d.
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {24LL * 3600 * 1000, "d"},
      {3600LL * 1000, "h"},
      {60LL * 1000, "m"},
      {1000, "s"}};
  for (const auto& [unit_ms, suffix] : kUnits) {
    if (ms > 0 && ms % unit_ms == 0) return absl::StrCat(ms / unit_ms, suffix);
  }
  return absl::StrCat(ms, "ms");
}

absl::StatusOr<std::vector<Slo>> ParseSloYaml(const std::string& text,
                                              const std::string& source) {
  std::vector<YAML::Node> docs;
  try {
    docs = config::LoadYamlDocuments(text);  // not LoadAll: it can hang
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": line ", e.mark.line + 1, ", column ",
                     e.mark.column + 1, ": not valid YAML: ", e.msg));
  }
  std::vector<Slo> slos;
  int document = 0;
  for (const YAML::Node& doc : docs) {
    ++document;
    if (!doc || doc.IsNull()) continue;
    Where where{source, document, ""};
    absl::StatusOr<Slo> slo;
    try {
      slo = ParseDocument(doc, where);
    } catch (const YAML::Exception& e) {
      return Bad(where, "(document)", absl::StrCat("unreadable: ", e.msg));
    }
    if (!slo.ok()) return slo.status();
    slos.push_back(*std::move(slo));
  }
  if (slos.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": no SLO found; add an OpenSLO v1 document (apiVersion: "
        "openslo/v1, kind: SLO), see configs/slo/demo-service.yaml"));
  }
  if (auto s = CheckDuplicates(slos); !s.ok()) return s;
  return slos;
}

absl::StatusOr<std::vector<Slo>> LoadSloFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot read the SLO file; check the path"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseSloYaml(text.str(), path);
}

absl::StatusOr<std::vector<Slo>> LoadSloDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat(dir,
                     ": not a directory; give the SLO directory, e.g. "
                     "configs/slo"));
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat(dir, ": cannot list the directory: ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir,
                     ": no *.yaml SLO files; add one, e.g. a copy of "
                     "configs/slo/demo-service.yaml"));
  }
  std::vector<Slo> slos;
  for (const std::string& file : files) {
    auto loaded = LoadSloFile(file);
    if (!loaded.ok()) return loaded.status();
    slos.insert(slos.end(), loaded->begin(), loaded->end());
  }
  if (auto s = CheckDuplicates(slos); !s.ok()) return s;
  return slos;
}

}  // namespace phaseloop::slo
