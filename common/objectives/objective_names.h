#ifndef PHASELOOP_COMMON_OBJECTIVES_OBJECTIVE_NAMES_H_
#define PHASELOOP_COMMON_OBJECTIVES_OBJECTIVE_NAMES_H_

// The names of what phaseloop optimises, as policy artifacts, replay buffer
// records, search and training options spell them (ARCHITECTURE.md,
// "Objectives and metrics"); one place for every stage:
//   "alloc_size"  the whole object's allocated bytes (every SHF_ALLOC
//                 section): the size objective (issue 20)
//   "text_size"   .text bytes alone: the first generation's size objective
//   "ir_count"    IR instructions
//   "runtime"     staging rewards (a speed policy)

#include <string_view>

namespace phaseloop::objectives {

inline constexpr char kObjectiveAllocSize[] = "alloc_size";
inline constexpr char kObjectiveTextSize[] = "text_size";
inline constexpr char kObjectiveIrCount[] = "ir_count";
inline constexpr char kObjectiveRuntime[] = "runtime";

// Sizes of the object (alloc_size, text_size), not of the IR.
inline bool IsObjectSizeObjective(std::string_view objective) {
  return objective == kObjectiveAllocSize || objective == kObjectiveTextSize;
}

}  // namespace phaseloop::objectives

#endif  // PHASELOOP_COMMON_OBJECTIVES_OBJECTIVE_NAMES_H_
