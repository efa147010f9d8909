#include "replay_buffer/objective_values.h"

namespace phaseloop::replay_buffer {

bool IsMeasuredObjective(std::string_view objective) {
  return objective == kObjectiveIrCount || IsObjectSizeObjective(objective);
}

int64_t StepValue(const v1::Step& step, std::string_view objective) {
  if (objective == kObjectiveAllocSize) return step.alloc_size_after();
  if (objective == kObjectiveTextSize) return step.text_size_after();
  if (objective == kObjectiveIrCount) return step.ir_count_after();
  return 0;
}

int64_t FinalValue(const v1::Episode& episode, std::string_view objective) {
  if (objective == kObjectiveAllocSize) return episode.final_alloc_size();
  if (objective == kObjectiveTextSize) return episode.final_text_size();
  if (objective == kObjectiveIrCount) return episode.final_ir_count();
  return 0;
}

int64_t OzValue(const v1::ModuleRecord& module, std::string_view objective) {
  if (objective == kObjectiveAllocSize) return module.alloc_size_oz();
  if (objective == kObjectiveTextSize) return module.text_size_oz();
  if (objective == kObjectiveIrCount) return module.ir_count_oz();
  return 0;
}

}  // namespace phaseloop::replay_buffer
