#include "compiler_driver/passes/tuned_pipeline.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace phaseloop::passes {
namespace {

constexpr int kMinInlineThreshold = -1000;
constexpr int kMaxInlineThreshold = 10000;

bool IsTunableLevel(absl::string_view level) {
  return level == "O1" || level == "O2" || level == "O3" || level == "Os" ||
         level == "Oz";
}

// The on/off keys: "unroll" and "no-unroll" set the same field.
struct Switch {
  const char* key;
  std::optional<bool> TunedPipeline::*field;
};

constexpr Switch kSwitches[] = {
    {"unroll", &TunedPipeline::unroll},
    {"interleave", &TunedPipeline::interleave},
    {"vectorize", &TunedPipeline::vectorize},
    {"slp", &TunedPipeline::slp},
    {"merge-functions", &TunedPipeline::merge_functions},
};

absl::Status Bad(absl::string_view params, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid tuned pipeline 'tuned<", params, ">': ", why,
                   " (compiler_driver/passes/llvm-16/tuning.tsv lists the "
                   "keys)"));
}

}  // namespace

absl::StatusOr<TunedPipeline> ParseTunedParams(absl::string_view params) {
  std::vector<absl::string_view> parts = absl::StrSplit(params, ';');
  TunedPipeline tuned;
  if (!IsTunableLevel(parts[0])) {
    return Bad(params, absl::StrCat("the level '", parts[0],
                                    "' is not one of O1|O2|O3|Os|Oz"));
  }
  tuned.level = std::string(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    absl::string_view part = parts[i];
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(part, absl::MaxSplits('=', 1));
    if (kv.first == "inline-threshold") {
      int value = 0;
      if (!absl::SimpleAtoi(kv.second, &value) || value < kMinInlineThreshold ||
          value > kMaxInlineThreshold) {
        return Bad(params, absl::StrCat("inline-threshold takes a whole "
                                        "number in [",
                                        kMinInlineThreshold, ", ",
                                        kMaxInlineThreshold, "], not '",
                                        kv.second, "'"));
      }
      if (tuned.inline_threshold) {
        return Bad(params, "inline-threshold is given twice");
      }
      tuned.inline_threshold = value;
      continue;
    }
    bool known = false;
    for (const Switch& s : kSwitches) {
      const bool on = part == s.key;
      const bool off = part == absl::StrCat("no-", s.key);
      if (!on && !off) continue;
      if ((tuned.*s.field).has_value()) {
        return Bad(params, absl::StrCat("'", s.key, "' is set twice"));
      }
      tuned.*s.field = on;
      known = true;
    }
    if (!known) {
      return Bad(params, absl::StrCat("unknown tuning '", part, "'"));
    }
  }
  return tuned;
}

std::optional<absl::StatusOr<TunedPipeline>> ParseTunedElement(
    absl::string_view element) {
  const absl::string_view prefix = "tuned<";
  if (element.size() <= prefix.size() ||
      element.substr(0, prefix.size()) != prefix || element.back() != '>') {
    return std::nullopt;
  }
  return ParseTunedParams(
      element.substr(prefix.size(), element.size() - prefix.size() - 1));
}

std::string TunedPipelineText(const TunedPipeline& tuned) {
  std::string text = absl::StrCat(kTunedPipelineName, "<", tuned.level);
  if (tuned.inline_threshold) {
    absl::StrAppend(&text, ";inline-threshold=", *tuned.inline_threshold);
  }
  for (const Switch& s : kSwitches) {
    const std::optional<bool>& value = tuned.*s.field;
    if (value) absl::StrAppend(&text, ";", *value ? "" : "no-", s.key);
  }
  return text + ">";
}

}  // namespace phaseloop::passes
