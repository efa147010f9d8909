#include "common/config/yaml_fields.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/yaml_keys.h"

namespace phaseloop::config {

YamlFields::YamlFields(std::string source, std::string documented_in)
    : source_(std::move(source)), documented_in_(std::move(documented_in)) {}

absl::StatusOr<YAML::Node> YamlFields::LoadMapping() const {
  std::ifstream in(source_);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", source_, " (",
                                            documented_in_, " is an example)"));
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": not valid YAML: ", e.what()));
  }
  if (!root.IsMap()) return Bad("(top)", "expected a mapping");
  return root;
}

absl::Status YamlFields::Bad(const std::string& field,
                             const std::string& problem) const {
  return absl::InvalidArgumentError(absl::StrCat(source_, ": ", field, ": ",
                                                 problem, " (", documented_in_,
                                                 " documents every field)"));
}

std::string YamlFields::Field(const std::string& prefix,
                              const std::string& key) const {
  return prefix.empty() ? key : absl::StrCat(prefix, ".", key);
}

absl::Status YamlFields::CheckKeys(const std::string& prefix,
                                   const YAML::Node& node,
                                   const std::set<std::string>& allowed) const {
  if (!node.IsMap()) {
    return Bad(prefix.empty() ? "(top)" : prefix, "expected a mapping");
  }
  for (const auto& entry : node) {
    const std::string key = config::MappingKeyText(entry.first);
    if (allowed.count(key)) continue;
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

absl::Status YamlFields::Number(const std::string& prefix,
                                const YAML::Node& node, const std::string& key,
                                double lo, double hi, double& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  double number = 0;
  if (!value.IsScalar() || !YAML::convert<double>::decode(value, number) ||
      !std::isfinite(number)) {
    return Bad(Field(prefix, key), "expected a number");
  }
  if (number < lo || number > hi) {
    return Bad(Field(prefix, key),
               absl::StrCat(number, " is outside [", lo, ", ", hi, "]"));
  }
  out = number;
  return absl::OkStatus();
}

absl::Status YamlFields::Int(const std::string& prefix, const YAML::Node& node,
                             const std::string& key, int64_t lo, int64_t hi,
                             int64_t& out) const {
  double number = static_cast<double>(out);
  if (absl::Status s = Number(prefix, node, key, static_cast<double>(lo),
                              static_cast<double>(hi), number);
      !s.ok()) {
    return s;
  }
  if (number != std::floor(number)) {
    return Bad(Field(prefix, key), "expected a whole number");
  }
  out = static_cast<int64_t>(number);
  return absl::OkStatus();
}

absl::Status YamlFields::Bool(const std::string& prefix,
                              const YAML::Node& node, const std::string& key,
                              bool& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  if (value.IsScalar() &&
      (value.Scalar() == "true" || value.Scalar() == "false")) {
    out = value.Scalar() == "true";
    return absl::OkStatus();
  }
  return Bad(Field(prefix, key), "expected true or false");
}

absl::Status YamlFields::TextList(const std::string& prefix,
                                  const YAML::Node& node,
                                  const std::string& key,
                                  std::vector<std::string>& out) const {
  const YAML::Node value = node[key];
  if (!value) return absl::OkStatus();
  if (!value.IsSequence()) {
    return Bad(Field(prefix, key), "expected a list of strings");
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

std::string YamlFields::Resolve(const std::string& path) const {
  if (path.empty() || path[0] == '/') return path;
  const size_t slash = source_.rfind('/');
  return (slash == std::string::npos ? std::string(".")
                                     : source_.substr(0, slash)) +
         "/" + path;
}

}  // namespace phaseloop::config
