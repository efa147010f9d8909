#ifndef PHASELOOP_TOOLS_CONFIG_CONFIG_CHECK_H_
#define PHASELOOP_TOOLS_CONFIG_CONFIG_CHECK_H_

// `phaseloop config check`: any phaseloop config file checked offline by the
// very parser the command that reads it uses (services, judges, error budget
// policies, load, SLOs, learner settings, loops, workloads), so a team can
// check the configs it keeps in its own repository, in its own CI, before a
// canary or a loop reads them. A file's kind is told by its top-level keys
// unless given; the files a service names (judge, error budget policy, SLO
// directory) and a loop names (service, learner, workloads) are checked
// with it.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace phaseloop::config_check {

enum class ConfigKind {
  kService,
  kJudge,
  kBudgetPolicy,
  kLoad,
  kSlo,
  kLearner,
  kLoop,
  kWorkload,
};

// "service", "judge", "budget-policy", "load", "slo", "learner", "loop",
// "workload", in that order.
const std::vector<std::string>& ConfigKindNames();
std::string ConfigKindName(ConfigKind kind);
std::optional<ConfigKind> ConfigKindFromName(const std::string& name);

// The kind the file's top-level keys (an SLO file's first document's) point
// to; InvalidArgument naming the file when they point to none or to several
// alike, NotFound when it cannot be read.
absl::StatusOr<ConfigKind> InferConfigKind(const std::string& path);

struct CheckedConfig {
  std::string path;
  std::optional<ConfigKind> kind;  // unset when it could not be told
  absl::Status status;             // OK: the parser took it
  std::string summary;             // what it says, when OK
  // Not told because it is another tool's manifest (an apiVersion other
  // than OpenSLO's, and a kind: a Kubernetes Deployment beside the SLOs).
  bool foreign = false;
};

// Checks `path` as `kind` (inferred when unset).
CheckedConfig CheckConfig(const std::string& path,
                          std::optional<ConfigKind> kind);

struct ConfigFile {
  std::string path;
  // Found by walking a directory, not named: another tool's manifest there
  // is skipped (listed, not an error).
  bool found_in_directory = false;
};

// The files FILE_OR_DIR arguments name: a file as given, a directory's
// *.yaml and *.yml below it (symbolic links to directories followed),
// sorted. NotFound naming a path that is neither.
absl::StatusOr<std::vector<ConfigFile>> ConfigFiles(
    const std::vector<std::string>& paths);

}  // namespace phaseloop::config_check

#endif  // PHASELOOP_TOOLS_CONFIG_CONFIG_CHECK_H_
