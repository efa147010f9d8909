#ifndef PHASELOOP_COMMON_CONFIG_YAML_KEYS_H_
#define PHASELOOP_COMMON_CONFIG_YAML_KEYS_H_

// The text of a mapping key for field checks. YAML allows a key that is a
// list or a map ("? [a, b]\n: 1"); yaml-cpp's key.as<std::string>() throws
// YAML::TypedBadConversion on one, which escaped the config parsers that
// check keys (learner_config_fuzzer found it). A non-scalar key reads as
// "(a key that is not a name)", which no config allows, so the usual
// "unknown field" error names it.

#include <string>

#include <yaml-cpp/yaml.h>

namespace phaseloop::config {

inline std::string MappingKeyText(const YAML::Node& key) {
  return key.IsScalar() ? key.Scalar() : "(a key that is not a name)";
}

}  // namespace phaseloop::config

#endif  // PHASELOOP_COMMON_CONFIG_YAML_KEYS_H_
