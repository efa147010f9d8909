#ifndef PHASELOOP_CANARY_LOAD_LOAD_SPEC_YAML_H_
#define PHASELOOP_CANARY_LOAD_LOAD_SPEC_YAML_H_

// The `load:` section of a YAML file (configs/canary/load.yaml documents
// every field) to a LoadSpec. Fields left out keep LoadSpec's defaults;
// unknown fields, wrong types and values out of range are InvalidArgument
// "FILE: load.FIELD: PROBLEM (configs/canary/load.yaml documents every
// field)" (common/config/yaml_fields).

#include <string>

#include "absl/status/statusor.h"
#include "canary/load/load_spec.h"

namespace YAML {
class Node;
}

namespace phaseloop::canary::load {

// `node` is the value of the `load:` key of `file_name` (named in errors).
absl::StatusOr<LoadSpec> LoadSpecFromYaml(const YAML::Node& node,
                                          const std::string& file_name);

// Reads `path`, whose top level is a mapping with a `load:` section (other
// top-level sections, e.g. a controller's, are left to their readers).
// NotFound when it cannot be read; InvalidArgument as above.
absl::StatusOr<LoadSpec> LoadSpecFromFile(const std::string& path);

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_LOAD_SPEC_YAML_H_
