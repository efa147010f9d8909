#include "common/config/yaml_fields.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_documents.h"
#include "common/config/yaml_keys.h"
#include "common/files/atomic_file.h"

namespace phaseloop::config {
namespace {

// [lo, hi] of whole numbers; the int64 maximum stands for "no upper end".
NumberRange WholeRange(int64_t lo, int64_t hi) {
  return {static_cast<double>(lo), hi == YamlFields::kNoUpperEnd
                                       ? std::numeric_limits<double>::infinity()
                                       : static_cast<double>(hi)};
}

// Whole numbers in full (3600000, not StrCat's 3.6e+06), others as StrCat.
std::string NumberText(double number) {
  if (number == std::floor(number) && std::fabs(number) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(number));
  }
  return absl::StrCat(number);
}

// `value` (as written for the user) is not in `range`.
std::string OutOfRange(const std::string& value, const NumberRange& range) {
  return std::isinf(range.hi)
             ? absl::StrCat("must be ", range.Text(), ", got ", value)
             : absl::StrCat(value, " is outside ", range.Text());
}

// An integer written in decimal digits, with an optional sign.
bool IsDecimal(const YAML::Node& value) {
  if (!value.IsScalar()) return false;
  const std::string& text = value.Scalar();
  const size_t digits = !text.empty() && (text[0] == '-' || text[0] == '+');
  return text.size() > digits &&
         std::all_of(text.begin() + digits, text.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool NumberRange::Contains(double value) const {
  const bool above = lo_open ? value > lo : value >= lo;
  const bool below = hi_open ? value < hi : value <= hi;
  return above && below;
}

std::string NumberRange::Text() const {
  if (std::isinf(hi)) {
    return absl::StrCat(lo_open ? "above " : "at least ", NumberText(lo));
  }
  return absl::StrCat(lo_open ? "(" : "[", NumberText(lo), ", ", NumberText(hi),
                      hi_open ? ")" : "]");
}

YamlFields::YamlFields(std::string source, std::string documented_in)
    : source_(std::move(source)), documented_in_(std::move(documented_in)) {}

absl::StatusOr<std::string> YamlFields::ReadText() const {
  std::string text;
  if (!files::ReadWholeFile(source_, &text).ok()) {
    return absl::NotFoundError(absl::StrCat("cannot read ", source_,
                                            "; give an existing file (",
                                            documented_in_, " is an example)"));
  }
  return text;
}

absl::StatusOr<YAML::Node> YamlFields::Parse(const std::string& text) const {
  if (const int line = SecondYamlDocumentLine(text); line > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        source_, ":", line,
        ": a second YAML document begins here; a config file holds one "
        "(the rest would be ignored): remove the '---' line, or put each "
        "document in a file of its own"));
  }
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": not valid YAML: ", e.what()));
  }
}

absl::StatusOr<YAML::Node> YamlFields::LoadMapping() const {
  auto text = ReadText();
  if (!text.ok()) return text.status();
  auto root = Parse(*text);
  if (!root.ok()) return root.status();
  if (!root->IsMap()) return Bad("(top)", "expected a mapping");
  return root;
}

absl::Status YamlFields::Bad(const std::string& field,
                             const std::string& problem) const {
  return absl::InvalidArgumentError(absl::StrCat(source_, ": ", field, ": ",
                                                 problem, " (", documented_in_,
                                                 " documents every field)"));
}

absl::Status YamlFields::InFile(const std::string& field,
                                const absl::Status& inner) const {
  return absl::InvalidArgumentError(
      absl::StrCat(source_, ": ", field, ": ", inner.message()));
}

std::string YamlFields::Field(const std::string& prefix,
                              const std::string& key) {
  return prefix.empty() ? key : absl::StrCat(prefix, ".", key);
}

std::string YamlFields::Describe(const YAML::Node& node) {
  if (node.IsScalar()) return absl::StrCat("\"", node.Scalar(), "\"");
  return node.IsNull() ? "nothing (an empty value)" : "a list or mapping";
}

absl::Status YamlFields::CheckKeys(
    const std::string& prefix, const YAML::Node& node,
    const std::set<std::string>& allowed,
    const std::map<std::string, std::string>& hints) const {
  if (!node.IsMap()) {
    return Bad(prefix.empty() ? "(top)" : prefix, "expected a mapping");
  }
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const std::string key = config::MappingKeyText(entry.first);
    // YAML lets a mapping repeat a key and yaml-cpp reads the first: the
    // second would be silently ignored.
    if (!seen.insert(key).second) {
      return Bad(Field(prefix, key), "given twice; keep one");
    }
    if (allowed.count(key)) continue;
    if (auto hint = hints.find(key); hint != hints.end()) {
      return Bad(Field(prefix, key), hint->second);
    }
    return Bad(Field(prefix, key),
               absl::StrCat("unknown field; expected one of: ",
                            absl::StrJoin(allowed, ", ")));
  }
  return absl::OkStatus();
}

absl::Status YamlFields::Text(const std::string& prefix, const YAML::Node& node,
                              const std::string& key, std::string& out,
                              bool required) const {
  const YAML::Node value = node[key];
  if (!value) {
    return required ? Bad(Field(prefix, key), "required") : absl::OkStatus();
  }
  if (!value.IsScalar() || value.Scalar().empty()) {
    return Bad(Field(prefix, key), "expected a non-empty string");
  }
  out = value.Scalar();
  return absl::OkStatus();
}

absl::StatusOr<double> YamlFields::NumberValue(const std::string& field,
                                               const YAML::Node& value) const {
  double number = 0;
  if (!value.IsScalar() || !YAML::convert<double>::decode(value, number) ||
      !std::isfinite(number)) {
    return Bad(field, absl::StrCat("expected a number, got ", Describe(value)));
  }
  return number;
}

absl::StatusOr<double> YamlFields::NumberValue(const std::string& field,
                                               const YAML::Node& value,
                                               const NumberRange& range) const {
  auto number = NumberValue(field, value);
  if (!number.ok()) return number.status();
  if (!range.Contains(*number)) {
    return Bad(field, OutOfRange(NumberText(*number), range));
  }
  return number;
}

absl::Status YamlFields::Number(const std::string& prefix,
                                const YAML::Node& node, const std::string& key,
                                const NumberRange& range, double& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  auto number = NumberValue(Field(prefix, key), value, range);
  if (!number.ok()) return number.status();
  out = *number;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> YamlFields::IntValue(const std::string& field,
                                             const YAML::Node& value,
                                             int64_t lo, int64_t hi) const {
  const NumberRange range = WholeRange(lo, hi);
  int64_t whole = 0;
  if (IsDecimal(value)) {
    // Base 10 always (YAML 1.2: 010 is ten; yaml-cpp's own conversion would
    // read it as octal) and exact (a seed above 2^53 keeps every digit).
    if (!absl::SimpleAtoi(value.Scalar(), &whole)) {
      return Bad(field, OutOfRange(value.Scalar(), range));
    }
  } else {
    // A whole number written otherwise ("1e3") through double.
    auto number = NumberValue(field, value);
    if (!number.ok()) return number.status();
    if (*number != std::floor(*number)) {
      return Bad(field, absl::StrCat("expected a whole number, got ",
                                     Describe(value)));
    }
    if (std::fabs(*number) >= 9.2e18) {
      return Bad(field, OutOfRange(NumberText(*number), range));
    }
    whole = static_cast<int64_t>(*number);
  }
  if (whole < lo || whole > hi) {
    return Bad(field, OutOfRange(absl::StrCat(whole), range));
  }
  return whole;
}

absl::Status YamlFields::UnsignedInt(const std::string& prefix,
                                     const YAML::Node& node,
                                     const std::string& key, int64_t lo,
                                     int64_t hi, uint64_t& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  // Above int64's range only as decimal digits, and only with no upper end.
  uint64_t big = 0;
  if (hi == kNoUpperEnd && IsDecimal(value) && value.Scalar()[0] != '-' &&
      absl::SimpleAtoi(value.Scalar(), &big) &&
      big > static_cast<uint64_t>(kNoUpperEnd)) {
    out = big;
    return absl::OkStatus();
  }
  auto whole =
      IntValue(Field(prefix, key), value, std::max<int64_t>(lo, 0), hi);
  if (!whole.ok()) return whole.status();
  out = static_cast<uint64_t>(*whole);
  return absl::OkStatus();
}

absl::Status YamlFields::Int(const std::string& prefix, const YAML::Node& node,
                             const std::string& key, int64_t lo, int64_t hi,
                             int64_t& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  auto number = IntValue(Field(prefix, key), value, lo, hi);
  if (!number.ok()) return number.status();
  out = *number;
  return absl::OkStatus();
}

absl::Status YamlFields::NotHeld(const std::string& field, int64_t value,
                                 int64_t lowest, int64_t most) const {
  return Bad(field,
             absl::StrCat(value, " is outside [", lowest, ", ", most, "]"));
}

absl::Status YamlFields::Bool(const std::string& prefix, const YAML::Node& node,
                              const std::string& key, bool& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  if (value.IsScalar() &&
      (value.Scalar() == "true" || value.Scalar() == "false")) {
    out = value.Scalar() == "true";
    return absl::OkStatus();
  }
  return Bad(Field(prefix, key),
             absl::StrCat("expected true or false, got ", Describe(value)));
}

absl::Status YamlFields::TextList(const std::string& prefix,
                                  const YAML::Node& node,
                                  const std::string& key,
                                  std::vector<std::string>& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  if (!value.IsSequence()) {
    return Bad(Field(prefix, key), "expected a list of strings, e.g. [a, b]");
  }
  out.clear();
  for (const YAML::Node& item : value) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return Bad(Field(prefix, key), "expected a list of non-empty strings");
    }
    out.push_back(item.Scalar());
  }
  return absl::OkStatus();
}

absl::Status YamlFields::Choice(const std::string& prefix,
                                const YAML::Node& node, const std::string& key,
                                const std::vector<ChoiceOption>& options,
                                std::string& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  if (value.IsScalar()) {
    for (const ChoiceOption& option : options) {
      if (value.Scalar() != option.name) continue;
      out = option.name;
      return absl::OkStatus();
    }
  }
  std::vector<std::string> described;
  for (const ChoiceOption& option : options) {
    described.push_back(
        option.meaning.empty()
            ? option.name
            : absl::StrCat(option.name, " (", option.meaning, ")"));
  }
  std::string listed = described.empty() ? "" : described.back();
  if (described.size() > 1) {
    described.pop_back();
    listed = absl::StrCat(absl::StrJoin(described, ", "), " or ", listed);
  }
  return Bad(Field(prefix, key),
             absl::StrCat(Describe(value), " is not a choice; use ", listed));
}

std::string YamlFields::Resolve(const std::string& path) const {
  if (path.empty() || path[0] == '/') return path;
  const size_t slash = source_.rfind('/');
  return (slash == std::string::npos ? std::string(".")
                                     : source_.substr(0, slash)) +
         "/" + path;
}

}  // namespace phaseloop::config
