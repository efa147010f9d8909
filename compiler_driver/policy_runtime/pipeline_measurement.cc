#include "compiler_driver/policy_runtime/pipeline_measurement.h"

#include <string>
#include <utility>

#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/observation/features.h"

namespace phaseloop::policy_runtime {

const PipelineMeasurement* MeasurementMemo::Find(const std::string& key) const {
  auto it = seen_.find(key);
  return it == seen_.end() ? nullptr : &it->second;
}

void MeasurementMemo::Remember(const std::string& key,
                               const PipelineMeasurement& m) {
  PipelineMeasurement figures = m;
  figures.object.clear();
  figures.reused = true;
  seen_.emplace(key, std::move(figures));
}

absl::StatusOr<PipelineMeasurement> MeasurePipeline(
    std::unique_ptr<llvm::Module> module, absl::string_view pipeline,
    passes::PassRunner& runner, codegen::ObjectEmitter* emitter,
    bool keep_object, MeasurementMemo* memo) {
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
  // The wrapper lowers coroutines a pipeline left unsplit before it emits:
  // that object is not this one, so it is not kept.
  keep_object = keep_object && !passes::HasUnloweredCoroutines(*module);
  if (keep_object) {
    absl::Status verified =
        passes::VerifyPipelineOutput(*module, std::string(pipeline));
    if (!verified.ok()) return verified;
  }
  std::string memo_key;
  if (memo != nullptr) {
    memo_key = ir::ModuleStateHash(*module) + " " +
               codegen::CodegenOptionsText(split->codegen);
    if (const PipelineMeasurement* earlier = memo->Find(memo_key)) {
      memo->CountReuse();
      return *earlier;
    }
  }
  absl::StatusOr<std::string> object =
      emitter->EmitObject(std::move(module), split->codegen);
  if (!object.ok()) return object.status();
  absl::StatusOr<codegen::ObjectSizes> sizes =
      codegen::MeasureObjectSizes(*object);
  if (!sizes.ok()) return sizes.status();
  m.text_size = sizes->text_size;
  m.alloc_size = sizes->alloc_size;
  if (memo != nullptr) memo->Remember(memo_key, m);
  if (keep_object) m.object = *std::move(object);
  return m;
}

}  // namespace phaseloop::policy_runtime
