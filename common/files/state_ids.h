#ifndef PHASELOOP_COMMON_FILES_STATE_IDS_H_
#define PHASELOOP_COMMON_FILES_STATE_IDS_H_

// Durable states kept one directory per id (STATE/canaries/<id>/,
// STATE/loops/<id>/): the one rule for an id that names a directory, and
// the ids a root holds.

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace phaseloop::files {

// [A-Za-z0-9._-]{1,100}, not starting with '.'. InvalidArgument naming
// `what` ("canary id") and `owner` ("the run's state directory").
absl::Status CheckStateId(const std::string& id, const std::string& what,
                          const std::string& owner);

// The names under `root` that are valid ids (none when root is missing).
std::vector<std::string> ListStateIds(const std::string& root);

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_STATE_IDS_H_
