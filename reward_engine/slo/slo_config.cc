#include "reward_engine/slo/slo_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/config/yaml_documents.h"
#include "common/config/yaml_fields.h"
#include "common/config/yaml_files.h"

namespace phaseloop::slo {
namespace {

using config::NumberRange;
using config::YamlFields;

constexpr char kDocs[] = "configs/slo/demo-service.yaml";

// The fields of one document, its errors prefixed "FILE: document N" and,
// once its name is read, "(SLO \"NAME\")".
YamlFields DocumentFields(const std::string& source, int document,
                          const std::string& name = "") {
  std::string where = absl::StrCat(source, ": document ", document);
  if (!name.empty()) absl::StrAppend(&where, " (SLO \"", name, "\")");
  return YamlFields(where, kDocs);
}

absl::StatusOr<std::string> RequiredText(const YamlFields& fields,
                                         const std::string& prefix,
                                         const YAML::Node& parent,
                                         const std::string& key) {
  std::string text;
  if (auto s = fields.Text(prefix, parent, key, text, true); !s.ok()) return s;
  return text;
}

// parent[key], which must be a mapping.
absl::StatusOr<YAML::Node> RequiredMapping(const YamlFields& fields,
                                           const std::string& field,
                                           const YAML::Node& parent,
                                           const std::string& key) {
  const YAML::Node node = parent[key];
  if (!node) return fields.Bad(field, "missing; add it");
  if (!node.IsMap()) return fields.Bad(field, "expected a mapping");
  return node;
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

absl::Status ParseIndicator(const YamlFields& fields, const YAML::Node& spec) {
  if (spec["indicatorRef"]) {
    return fields.Bad("spec.indicatorRef",
                      "SLI references are not supported; inline the indicator "
                      "(spec.indicator with spec.thresholdMetric)");
  }
  auto indicator = RequiredMapping(fields, "spec.indicator", spec, "indicator");
  if (!indicator.ok()) return indicator.status();
  if (auto s =
          fields.CheckKeys("spec.indicator", *indicator, {"metadata", "spec"});
      !s.ok()) {
    return s;
  }
  if (const YAML::Node metadata = (*indicator)["metadata"]; metadata) {
    if (auto s =
            fields.CheckKeys("spec.indicator.metadata", metadata,
                             {"name", "displayName", "labels", "annotations"});
        !s.ok()) {
      return s;
    }
  }
  auto sli = RequiredMapping(fields, "spec.indicator.spec", *indicator, "spec");
  if (!sli.ok()) return sli.status();
  if (auto s = fields.CheckKeys(
          "spec.indicator.spec", *sli, {"description", "thresholdMetric"},
          {{"ratioMetric",
            "ratio SLIs are not supported; phaseloop's SLI is a latency "
            "threshold: use thresholdMetric and put op/value in the "
            "objective"}});
      !s.ok()) {
    return s;
  }
  const std::string tm_field = "spec.indicator.spec.thresholdMetric";
  auto threshold_metric =
      RequiredMapping(fields, tm_field, *sli, "thresholdMetric");
  if (!threshold_metric.ok()) return threshold_metric.status();
  if (auto s = fields.CheckKeys(tm_field, *threshold_metric, {"metricSource"});
      !s.ok()) {
    return s;
  }
  const std::string ms_field = tm_field + ".metricSource";
  auto source =
      RequiredMapping(fields, ms_field, *threshold_metric, "metricSource");
  if (!source.ok()) return source.status();
  if (auto s = fields.CheckKeys(
          ms_field, *source, {"type", "spec"},
          {{"metricSourceRef",
            "not supported: phaseloop's SLI windows come from Kafka "
            "(phaseloop sli send, the SLI recorder); remove it"}});
      !s.ok()) {
    return s;
  }
  auto type = RequiredText(fields, ms_field, *source, "type");
  if (!type.ok()) return type.status();
  if (*type != "phaseloop") {
    return fields.Bad(
        ms_field + ".type",
        absl::StrCat("\"", *type,
                     "\" is not supported; use \"phaseloop\" (the SLI "
                     "windows services publish to Kafka)"));
  }
  if (const YAML::Node source_spec = (*source)["spec"]; source_spec) {
    if (auto s =
            fields.CheckKeys(ms_field + ".spec", source_spec, {"quantile"});
        !s.ok()) {
      return s;
    }
    if (source_spec["quantile"]) {
      auto q = fields.NumberValue(ms_field + ".spec.quantile",
                                  source_spec["quantile"]);
      if (!q.ok()) return q.status();
      if (*q != 0.95) {
        return fields.Bad(
            ms_field + ".spec.quantile",
            "only 0.95 is supported (the reward is log(SLO / p95)); "
            "set it to 0.95 or remove it");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ParseTimeWindow(const YamlFields& fields, const YAML::Node& spec,
                             Slo& slo) {
  const YAML::Node windows = spec["timeWindow"];
  if (!windows) {
    return fields.Bad("spec.timeWindow",
                      "missing; add [{duration: 30d, isRolling: true}]");
  }
  if (!windows.IsSequence() || windows.size() != 1) {
    return fields.Bad(
        "spec.timeWindow",
        "must be a list of exactly one window, e.g. [{duration: 30d, "
        "isRolling: true}]");
  }
  const YAML::Node window = windows[0];
  const std::string field = "spec.timeWindow[0]";
  if (auto s = fields.CheckKeys(field, window, {"duration", "isRolling"},
                                {{"calendar",
                                  "calendar windows are not supported; use a "
                                  "rolling window (isRolling: true)"}});
      !s.ok()) {
    return s;
  }
  bool is_rolling = false;
  if (auto s = fields.Bool(field, window, "isRolling", is_rolling); !s.ok()) {
    return s;
  }
  if (!is_rolling) {
    return fields.Bad(
        field + ".isRolling",
        "only rolling windows are supported; set isRolling: true");
  }
  auto duration = RequiredText(fields, field, window, "duration");
  if (!duration.ok()) return duration.status();
  auto ms = ParseDurationMs(*duration);
  if (!ms.ok()) {
    return fields.Bad(field + ".duration", std::string(ms.status().message()));
  }
  if (*ms < 60 * 60 * 1000) {
    return fields.Bad(
        field + ".duration",
        absl::StrCat("\"", *duration,
                     "\" is shorter than 1h; SLO windows are days "
                     "long, e.g. 30d"));
  }
  slo.window_ms = *ms;
  return absl::OkStatus();
}

absl::Status ParseObjective(const YamlFields& fields, const YAML::Node& spec,
                            Slo& slo) {
  const YAML::Node objectives = spec["objectives"];
  if (!objectives) {
    return fields.Bad("spec.objectives",
                      "missing; add [{op: lte, value: 250, target: 0.99}]");
  }
  if (!objectives.IsSequence() || objectives.size() != 1) {
    return fields.Bad(
        "spec.objectives",
        "must be a list of exactly one objective; write one SLO per "
        "objective");
  }
  const YAML::Node objective = objectives[0];
  const std::string field = "spec.objectives[0]";
  if (auto s = fields.CheckKeys(
          field, objective,
          {"displayName", "op", "value", "target", "targetPercent",
           "timeSliceTarget", "timeSliceWindow"});
      !s.ok()) {
    return s;
  }
  auto op = RequiredText(fields, field, objective, "op");
  if (!op.ok()) return op.status();
  if (*op != "lte") {
    return fields.Bad(
        field + ".op",
        absl::StrCat("\"", *op,
                     "\" is not supported; a latency threshold is "
                     "met when latency <= value: use lte"));
  }
  if (!objective["value"]) {
    return fields.Bad(field + ".value",
                      "missing threshold; add the latency threshold in "
                      "milliseconds, e.g. value: 250");
  }
  auto value = fields.NumberValue(field + ".value", objective["value"]);
  if (!value.ok()) return value.status();
  if (*value <= 0) {
    return fields.Bad(field + ".value",
                      "the threshold must be > 0 milliseconds");
  }
  slo.threshold_ms = *value;

  const bool has_target = static_cast<bool>(objective["target"]);
  const bool has_percent = static_cast<bool>(objective["targetPercent"]);
  if (has_target == has_percent) {
    return fields.Bad(field + ".target",
                      "give exactly one of target (a fraction, e.g. 0.99) or "
                      "targetPercent (e.g. 99)");
  }
  if (has_target) {
    auto target = fields.NumberValue(field + ".target", objective["target"]);
    if (!target.ok()) return target.status();
    if (!(*target > 0 && *target < 1)) {
      return fields.Bad(
          field + ".target",
          absl::StrCat(*target,
                       " is outside (0, 1); write a fraction, e.g. "
                       "0.99 (or targetPercent: 99)"));
    }
    slo.target = *target;
  } else {
    auto percent = fields.NumberValue(field + ".targetPercent",
                                      objective["targetPercent"]);
    if (!percent.ok()) return percent.status();
    if (!(*percent > 0 && *percent < 100)) {
      return fields.Bad(
          field + ".targetPercent",
          absl::StrCat(*percent, " is outside (0, 100), e.g. 99"));
    }
    slo.target = *percent / 100;
  }

  if (objective["timeSliceTarget"]) {
    if (slo.budgeting_method != kTimeslices) {
      return fields.Bad(
          field + ".timeSliceTarget",
          "only meaningful with budgetingMethod: Timeslices; remove it");
    }
    auto tst = fields.NumberValue(field + ".timeSliceTarget",
                                  objective["timeSliceTarget"]);
    if (!tst.ok()) return tst.status();
    if (!(*tst > 0 && *tst <= 1)) {
      return fields.Bad(field + ".timeSliceTarget",
                        absl::StrCat(*tst, " is outside (0, 1]; e.g. 0.95"));
    }
    slo.time_slice_target = *tst;
  }
  if (objective["timeSliceWindow"]) {
    if (slo.budgeting_method != kTimeslices) {
      return fields.Bad(
          field + ".timeSliceWindow",
          "only meaningful with budgetingMethod: Timeslices; remove it");
    }
    auto w = RequiredText(fields, field, objective, "timeSliceWindow");
    if (!w.ok()) return w.status();
    auto ms = ParseDurationMs(*w);
    if (!ms.ok()) {
      return fields.Bad(field + ".timeSliceWindow",
                        std::string(ms.status().message()));
    }
    if (*ms > slo.window_ms) {
      return fields.Bad(field + ".timeSliceWindow",
                        absl::StrCat(*w, " is longer than the SLO's window"));
    }
    slo.time_slice_window_ms = *ms;
  }
  return absl::OkStatus();
}

// `name`: the SLO's name once read (for the errors of a document that
// throws after it).
absl::StatusOr<Slo> ParseDocument(const YAML::Node& doc,
                                  const std::string& source, int document,
                                  std::string& name_read) {
  YamlFields fields = DocumentFields(source, document);
  if (!doc.IsMap()) return fields.Bad("(document)", "expected a mapping");
  if (auto s =
          fields.CheckKeys("", doc, {"apiVersion", "kind", "metadata", "spec"});
      !s.ok()) {
    return s;
  }
  auto api = RequiredText(fields, "", doc, "apiVersion");
  if (!api.ok()) return api.status();
  if (*api != "openslo/v1") {
    return fields.Bad(
        "apiVersion",
        absl::StrCat("\"", *api,
                     "\" is not supported; use apiVersion: openslo/v1"));
  }
  auto kind = RequiredText(fields, "", doc, "kind");
  if (!kind.ok()) return kind.status();
  if (*kind != "SLO") {
    return fields.Bad(
        "kind", absl::StrCat("\"", *kind,
                             "\" is not supported; only kind: SLO is read "
                             "(put other OpenSLO objects elsewhere)"));
  }
  auto metadata = RequiredMapping(fields, "metadata", doc, "metadata");
  if (!metadata.ok()) return metadata.status();
  if (auto s =
          fields.CheckKeys("metadata", *metadata,
                           {"name", "displayName", "labels", "annotations"});
      !s.ok()) {
    return s;
  }
  Slo slo;
  auto name = RequiredText(fields, "metadata", *metadata, "name");
  if (!name.ok()) return name.status();
  if (!IsRfc1123Name(*name)) {
    return fields.Bad(
        "metadata.name",
        absl::StrCat("\"", *name,
                     "\" is not a valid name: at most 63 lowercase "
                     "letters, digits or '-', starting and ending "
                     "with a letter or digit"));
  }
  slo.name = *name;
  name_read = slo.name;
  fields = DocumentFields(source, document, slo.name);
  if (const YAML::Node display = (*metadata)["displayName"]; display) {
    if (!display.IsScalar()) {
      return fields.Bad("metadata.displayName", "expected a string");
    }
    slo.display_name = display.Scalar();
  }

  auto spec = RequiredMapping(fields, "spec", doc, "spec");
  if (!spec.ok()) return spec.status();
  if (auto s = fields.CheckKeys(
          "spec", *spec,
          {"description", "service", "indicator", "indicatorRef", "timeWindow",
           "budgetingMethod", "objectives"},
          {{"alertPolicies",
            "alert policies are not supported; phaseloop computes the "
            "multiwindow burn-rate alerts itself: remove it"}});
      !s.ok()) {
    return s;
  }
  auto service = RequiredText(fields, "spec", *spec, "service");
  if (!service.ok()) return service.status();
  if (service->find('/') != std::string::npos) {
    return fields.Bad("spec.service",
                      absl::StrCat("\"", *service,
                                   "\" contains '/', which Kafka keys use as a "
                                   "separator; rename the service"));
  }
  slo.service = *service;

  auto method = RequiredText(fields, "spec", *spec, "budgetingMethod");
  if (!method.ok()) return method.status();
  if (*method != kOccurrences && *method != kTimeslices) {
    return fields.Bad("spec.budgetingMethod",
                      absl::StrCat("\"", *method,
                                   "\" is not supported; use Occurrences or "
                                   "Timeslices"));
  }
  slo.budgeting_method = *method;

  if (auto s = ParseIndicator(fields, *spec); !s.ok()) return s;
  if (auto s = ParseTimeWindow(fields, *spec, slo); !s.ok()) return s;
  if (auto s = ParseObjective(fields, *spec, slo); !s.ok()) return s;
  if (slo.budgeting_method == kTimeslices && slo.time_slice_target == 0) {
    slo.time_slice_target = slo.target;
  }
  slo.source = source;
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
    absl::StatusOr<Slo> slo;
    std::string name;
    try {
      slo = ParseDocument(doc, source, document, name);
    } catch (const YAML::Exception& e) {
      return DocumentFields(source, document, name)
          .Bad("(document)", absl::StrCat("unreadable: ", e.msg));
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
  auto text = YamlFields(path, kDocs).ReadText();
  if (!text.ok()) return text.status();
  return ParseSloYaml(*text, path);
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
  // Walked as `config check` walks it.
  absl::StatusOr<std::vector<config::FoundYaml>> found =
      config::FindYamlFiles(dir);
  if (!found.ok()) return found.status();
  std::vector<std::string> files;
  for (const config::FoundYaml& yaml : *found) {
    // `config check configs/slo` walks subdirectories and passed a nested
    // SLO whose windows the engine then dead-lettered as unknown_service.
    if (yaml.depth > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          dir, ": ", yaml.path,
          " is in a subdirectory, and an SLO directory is read one level "
          "deep (its SLOs would never be judged); move the file up into ",
          dir, ", or give that subdirectory as the SLO directory"));
    }
    files.push_back(yaml.path);
  }
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

absl::StatusOr<std::vector<Slo>> LoadSloDirectory(const std::string& dir,
                                                  int64_t engine_window_ms) {
  absl::StatusOr<std::vector<Slo>> slos = LoadSloDirectory(dir);
  if (!slos.ok()) return slos;
  if (absl::Status slices = CheckTimeSlices(*slos, engine_window_ms);
      !slices.ok()) {
    return slices;
  }
  return slos;
}

absl::Status CheckTimeSlices(const std::vector<Slo>& slos,
                             int64_t engine_window_ms) {
  for (const Slo& slo : slos) {
    if (slo.time_slice_window_ms == 0 || engine_window_ms <= 0 ||
        slo.time_slice_window_ms % engine_window_ms == 0) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        slo.source.empty() ? "" : absl::StrCat(slo.source, ": "), "SLO ",
        slo.name, ": timeSliceWindow is ", slo.time_slice_window_ms,
        " ms, not a multiple of the reward engine's window (", engine_window_ms,
        " ms): a timeslice holds whole engine windows; make it a multiple, "
        "or change the engine's window (--window-ms, or rewards.window_ms of "
        "the service's configs/services file)"));
  }
  return absl::OkStatus();
}

}  // namespace phaseloop::slo
