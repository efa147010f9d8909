#ifndef PHASELOOP_TOOLS_LOOP_LAB_STAGES_H_
#define PHASELOOP_TOOLS_LOOP_LAB_STAGES_H_

// The loop's lab stages, which write a buffer file of their own and merge
// it (stage_commands.h): explore (a runtime search, its episodes and
// staging rewards) and stage (the candidate against stable on a workload:
// the speed figure the canary's error budget is told, or a miscompile).

#include "absl/status/statusor.h"
#include "tools/loop/loop_stages.h"

namespace phaseloop::loop {

absl::StatusOr<StageOutcome> Explore(const StageContext& ctx,
                                     v1::LoopIteration& it,
                                     StageExecutor& executor);
absl::StatusOr<StageOutcome> Stage(const StageContext& ctx,
                                   v1::LoopIteration& it,
                                   StageExecutor& executor);

}  // namespace phaseloop::loop

#endif  // PHASELOOP_TOOLS_LOOP_LAB_STAGES_H_
