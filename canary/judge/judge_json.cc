#include "canary/judge/judge_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/json/strict_json.h"

namespace phaseloop::canary {
namespace {

using Json = nlohmann::json;

constexpr char kShape[] =
    "; expected {\"metrics\": {\"NAME\": {\"baseline\": [numbers], "
    "\"canary\": [numbers]}}}";

absl::Status Bad(const std::string& where, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", problem));
}

absl::Status ReadSide(const Json& metric, const std::string& where,
                      const char* side, std::vector<double>& out) {
  auto it = metric.find(side);
  const std::string field = absl::StrCat(where, ".", side);
  if (it == metric.end()) {
    return Bad(field, absl::StrCat("missing; send the ", side,
                                   "'s samples (an empty list if it has "
                                   "none: the judge answers Error)"));
  }
  if (!it->is_array()) return Bad(field, "must be a list of numbers");
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& value = (*it)[i];
    if (!value.is_number()) {
      return Bad(
          absl::StrCat(field, "[", i, "]"),
          absl::StrCat("expected a number, got ",
                       value.dump(-1, ' ', false,
                                  nlohmann::json::error_handler_t::replace)));
    }
    out.push_back(value.get<double>());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, Samples>> ReadMetrics(
    const Json& metrics) {
  if (!metrics.is_object()) {
    return Bad("metrics", absl::StrCat("must be an object", kShape));
  }
  std::map<std::string, Samples> out;
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    const std::string where = absl::StrCat("metrics.", it.key());
    if (it.key().empty()) return Bad("metrics", "a metric has an empty name");
    if (!it->is_object()) {
      return Bad(where, "must be an object with \"baseline\" and \"canary\"");
    }
    for (auto field = it->begin(); field != it->end(); ++field) {
      if (field.key() != "baseline" && field.key() != "canary") {
        return Bad(absl::StrCat(where, ".", field.key()),
                   "unknown field; expected baseline and canary");
      }
    }
    Samples& samples = out[it.key()];
    if (auto s = ReadSide(*it, where, "baseline", samples.baseline); !s.ok()) {
      return s;
    }
    if (auto s = ReadSide(*it, where, "canary", samples.canary); !s.ok()) {
      return s;
    }
  }
  return out;
}

Json Number(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

Json Summary(const SampleSummary& s) {
  return {{"count", s.count},
          {"median", Number(s.median)},
          {"p95", Number(s.p95)},
          {"percentile", Number(s.percentile)}};
}

}  // namespace

absl::StatusOr<std::map<std::string, Samples>> ParseJudgeRequest(
    const std::string& body) {
  // A key given twice (two "baseline" lists, a metric named twice) is
  // refused: the last one won without a word.
  std::optional<std::string> duplicate;
  absl::StatusOr<Json> parsed = json_text::ParseStrictJson(body, &duplicate);
  if (!parsed.ok() && duplicate) {
    return Bad(duplicate->empty() ? "\"\"" : *duplicate,
               "given twice; give each field once");
  }
  if (!parsed.ok()) {
    return Bad("request body", absl::StrCat("not valid JSON", kShape));
  }
  const Json request = *std::move(parsed);
  if (!request.is_object()) {
    return Bad("request body", absl::StrCat("must be a JSON object", kShape));
  }
  if (auto it = request.find("metrics"); it != request.end()) {
    return ReadMetrics(*it);
  }
  // Flagger's webhook envelope: the metrics object as a string in metadata.
  auto metadata = request.find("metadata");
  if (metadata != request.end() && metadata->is_object()) {
    auto text = metadata->find("metrics");
    if (text == metadata->end() || !text->is_string()) {
      return Bad("metadata.metrics",
                 "missing; a Flagger webhook must carry the samples as a "
                 "JSON string in metadata.metrics");
    }
    absl::StatusOr<Json> metrics =
        json_text::ParseStrictJson(text->get<std::string>(), &duplicate);
    if (!metrics.ok() && duplicate) {
      return Bad("metadata.metrics." + *duplicate,
                 "given twice; give each field once");
    }
    if (!metrics.ok()) return Bad("metadata.metrics", "not valid JSON");
    return ReadMetrics(*metrics);
  }
  return Bad("request body", absl::StrCat("has no \"metrics\" (nor Flagger's "
                                          "metadata.metrics)",
                                          kShape));
}

std::string JudgementToJson(const Judgement& judgement) {
  Json metrics = Json::array();
  for (const MetricJudgement& m : judgement.metrics) {
    metrics.push_back(
        {{"name", m.name},
         {"outcome", OutcomeName(m.outcome)},
         {"reason", m.reason},
         {"critical", m.critical},
         {"weight", m.weight},
         {"baseline", Summary(m.baseline)},
         {"canary", Summary(m.canary)},
         {"ratio", m.ratio ? Number(*m.ratio) : Json(nullptr)},
         {"p_value", m.p_value ? Number(*m.p_value) : Json(nullptr)},
         {"test", m.test.empty() ? Json(nullptr) : Json(m.test)}});
  }
  const Json response = {{"result",
                          {{"outcome", OutcomeName(judgement.outcome)},
                           {"score", Number(judgement.score)},
                           {"reasons", judgement.reasons},
                           {"metrics", metrics}}}};
  return response.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string ErrorToJson(const std::string& message) {
  return Json{{"error", message}}.dump(-1, ' ', false,
                                       Json::error_handler_t::replace) +
         "\n";
}

}  // namespace phaseloop::canary
