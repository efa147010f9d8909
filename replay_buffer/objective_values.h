#ifndef PHASELOOP_REPLAY_BUFFER_OBJECTIVE_VALUES_H_
#define PHASELOOP_REPLAY_BUFFER_OBJECTIVE_VALUES_H_

// The measured objectives a search, a candidate miner or a learner can
// minimise, and where the buffer's records keep each one's value
// (ARCHITECTURE.md, "Objectives and metrics"):
//   "alloc_size"  the whole object's allocated bytes (every SHF_ALLOC
//                 section): the size objective (issue 20), so bytes moved
//                 from .text into .rodata or .eh_frame count
//   "text_size"   .text bytes alone: the first generation's size objective,
//                 kept as a secondary figure and for old episodes
//   "ir_count"    IR instructions
// "runtime" episodes carry staging rewards instead of values.

#include <cstdint>
#include <string_view>

#include "common/objectives/objective_names.h"
#include "proto/phaseloop/v1/episode.pb.h"

namespace phaseloop::replay_buffer {

using objectives::IsObjectSizeObjective;
using objectives::kObjectiveAllocSize;
using objectives::kObjectiveIrCount;
using objectives::kObjectiveTextSize;

// One of the three above.
bool IsMeasuredObjective(std::string_view objective);

// The objective's value after the step; 0 when the step did not measure it
// (or the objective is not a measured one).
int64_t StepValue(const v1::Step& step, std::string_view objective);

// The objective's value of the episode's final state; 0 when not recorded.
int64_t FinalValue(const v1::Episode& episode, std::string_view objective);

// -Oz's value on the module; 0 when the record does not carry it (records
// written before alloc_size_oz existed).
int64_t OzValue(const v1::ModuleRecord& module, std::string_view objective);

}  // namespace phaseloop::replay_buffer

#endif  // PHASELOOP_REPLAY_BUFFER_OBJECTIVE_VALUES_H_
