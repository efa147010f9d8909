#ifndef PHASELOOP_TOOLS_LOOP_BUILD_FIGURES_H_
#define PHASELOOP_TOOLS_LOOP_BUILD_FIGURES_H_

// What the service's build with a policy weighs and costs, from the
// decisions phaseloop-cc recorded for it (joined by build_id in the replay
// buffer): translation units the policy optimised, how many it moved off
// -O3's own pipeline, their objects' allocated bytes, and the compile time
// (whole wrapper, and the policy's decisions alone).

#include <string>

#include "absl/status/statusor.h"
#include "phaseloop/v1/loop.pb.h"

namespace phaseloop::loop {

// NotFound when the buffer holds no decision of the build.
absl::StatusOr<v1::LoopBuildFigures> ReadBuildFigures(
    const std::string& buffer_path, const std::string& build_id);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_BUILD_FIGURES_H_
