#include "compiler_driver/policy_runtime/pipeline_measurement.h"

#include <string>
#include <utility>

#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/observation/features.h"

namespace phaseloop::policy_runtime {

absl::StatusOr<PipelineMeasurement> MeasurePipeline(
    std::unique_ptr<llvm::Module> module, absl::string_view pipeline,
    passes::PassRunner& runner, codegen::ObjectEmitter* emitter) {
  absl::StatusOr<codegen::SplitPipelineText> split =
      codegen::SplitPipeline(pipeline);
  if (!split.ok()) return split.status();
  if (!split->ir_pipeline.empty()) {
    absl::Status ran = runner.Run(*module, split->ir_pipeline);
    if (!ran.ok()) return ran;
  }
  PipelineMeasurement m;
  m.ir_count = observation::IrInstructionCount(*module);
  if (emitter == nullptr) return m;
  absl::StatusOr<std::string> object =
      emitter->EmitObject(std::move(module), split->codegen);
  if (!object.ok()) return object.status();
  absl::StatusOr<int64_t> text = codegen::TextSectionBytes(*object);
  if (!text.ok()) return text.status();
  m.text_size = *text;
  absl::StatusOr<int64_t> alloc = codegen::AllocatedSectionBytes(*object);
  if (!alloc.ok()) return alloc.status();
  m.alloc_size = *alloc;
  return m;
}

}  // namespace phaseloop::policy_runtime
