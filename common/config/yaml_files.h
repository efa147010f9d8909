#ifndef PHASELOOP_COMMON_CONFIG_YAML_FILES_H_
#define PHASELOOP_COMMON_CONFIG_YAML_FILES_H_

// The YAML files under a directory, walked one way for every reader (`config
// check`, SLO directories): the two walked differently, so a file one read
// the other never saw.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::config {

struct FoundYaml {
  std::string path;
  int depth = 0;  // 0: in the directory itself
};

// Every *.yaml / *.yml under `dir`, sorted by path. Links to directories
// are followed, each directory listed once (a link back up the tree would
// loop); entries named with a leading dot are left out (a Kubernetes
// ConfigMap mount keeps its real files in `..<timestamp>/`, linked from the
// top); a dangling link is listed (its reader says it cannot be read).
// NotFound naming `dir` when it cannot be listed.
absl::StatusOr<std::vector<FoundYaml>> FindYamlFiles(const std::string& dir);

}  // namespace phaseloop::config

#endif  // PHASELOOP_COMMON_CONFIG_YAML_FILES_H_
