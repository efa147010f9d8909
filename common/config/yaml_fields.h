#ifndef PHASELOOP_COMMON_CONFIG_YAML_FIELDS_H_
#define PHASELOOP_COMMON_CONFIG_YAML_FIELDS_H_

// Reading a YAML config file field by field with errors that name the file,
// the field and where the fields are documented:
//   "configs/loop/demo.yaml: explore.budget_s: 0 is outside [1, 86400]
//    (configs/loop/demo.yaml documents every field)".
// Unknown keys are errors (a typo never silently means a default).

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::config {

class YamlFields {
 public:
  // `source`: the file's path as the user gave it; `documented_in`: the
  // file whose comments document every field.
  YamlFields(std::string source, std::string documented_in);

  // Reads and parses `source`: NotFound when it cannot be read,
  // InvalidArgument when it is not YAML or its top is not a mapping.
  absl::StatusOr<YAML::Node> LoadMapping() const;

  absl::Status Bad(const std::string& field, const std::string& problem) const;
  // Every key of `node` (a mapping named `prefix`, "" for the top) is in
  // `allowed`.
  absl::Status CheckKeys(const std::string& prefix, const YAML::Node& node,
                         const std::set<std::string>& allowed) const;

  // node[key] when present (out unchanged when absent; required = error).
  absl::Status Text(const std::string& prefix, const YAML::Node& node,
                    const std::string& key, std::string& out,
                    bool required = false) const;
  absl::Status Int(const std::string& prefix, const YAML::Node& node,
                   const std::string& key, int64_t lo, int64_t hi,
                   int64_t& out) const;
  absl::Status Number(const std::string& prefix, const YAML::Node& node,
                      const std::string& key, double lo, double hi,
                      double& out) const;
  // true/false (YAML 1.2's spellings only: yes/no/on/off are errors).
  absl::Status Bool(const std::string& prefix, const YAML::Node& node,
                    const std::string& key, bool& out) const;
  // A list of non-empty strings.
  absl::Status TextList(const std::string& prefix, const YAML::Node& node,
                        const std::string& key,
                        std::vector<std::string>& out) const;
  // A path relative to the config file's directory (absolute paths kept).
  std::string Resolve(const std::string& path) const;

  const std::string& source() const { return source_; }

 private:
  std::string Field(const std::string& prefix, const std::string& key) const;

  std::string source_;
  std::string documented_in_;
};

}  // namespace phaseloop::config

#endif  // PHASELOOP_COMMON_CONFIG_YAML_FIELDS_H_
