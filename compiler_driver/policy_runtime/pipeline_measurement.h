#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_PIPELINE_MEASUREMENT_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_PIPELINE_MEASUREMENT_H_

// Measuring what one compilation pipeline (IR passes, optionally ending in
// codegen<...> options: compiler_driver/codegen/codegen_options.h) does to a
// module: the one way topk, `phaseloop eval` and `phaseloop candidates mine`
// measure, so their figures agree with each other and with the wrapper.
//
// The object is emitted from the optimised module itself, which is what the
// wrapper does: emitting a clone of an optimised module can move a few bytes
// of .text. Not thread-safe (PassRunner and ObjectEmitter are not); a
// pipeline that crashes LLVM crashes the caller.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/passes/pass_runner.h"
#include "llvm/IR/Module.h"

namespace phaseloop::policy_runtime {

struct PipelineMeasurement {
  int64_t ir_count = 0;
  int64_t text_size = -1;   // -1: not emitted (no emitter given)
  int64_t alloc_size = -1;  // the whole object's allocated bytes; -1 likewise
  // With keep_object: the object itself, the bytes the wrapper writes for
  // `pipeline` (the IR verified; the same emitter). Empty when not kept: no
  // emitter, or coroutines the wrapper would still have to lower.
  std::string object;
};

// Runs `pipeline` on `module` (consumed; pass a clone to keep the original)
// and measures ir_count, and text_size and alloc_size when `emitter` is not
// null. An empty pipeline measures the module as it is. InvalidArgument for
// a malformed pipeline; the runner's and emitter's errors otherwise.
// `keep_object` (topk, so the wrapper need not optimise and emit its choice
// a second time): the optimised IR is verified first, as the wrapper does
// (Internal "verifier_failed: ..." when broken), and the object is kept.
absl::StatusOr<PipelineMeasurement> MeasurePipeline(
    std::unique_ptr<llvm::Module> module, absl::string_view pipeline,
    passes::PassRunner& runner, codegen::ObjectEmitter* emitter,
    bool keep_object = false);

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_PIPELINE_MEASUREMENT_H_
