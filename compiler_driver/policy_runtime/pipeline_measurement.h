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

#include "absl/container/flat_hash_map.h"
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
  // The sizes were known from an earlier measurement of the same module
  // whose optimised IR came out equal (MeasurementMemo): no code was
  // generated, and no object is kept.
  bool reused = false;
};

// One module's earlier measurements, by what code generation reads: the
// optimised IR's state (ir::ModuleStateHash, use lists included) and the
// codegen options. Many candidate pipelines leave a module exactly as an
// earlier one did (-Oz followed by passes with nothing left to do; two
// sequences that differ only in passes that find no work), and generating
// code for equal IR with equal options gives the same object, so a second
// such pipeline's sizes are known without emitting anything: topk, eval and
// mining measure exactly what they measured before, with fewer emissions.
// For one module (one loop over its pipelines); thread-compatible.
class MeasurementMemo {
 public:
  // The earlier measurement under `key`, or null.
  const PipelineMeasurement* Find(const std::string& key) const;
  // Keeps `m`'s figures (not its object) under `key`.
  void Remember(const std::string& key, const PipelineMeasurement& m);
  // Measurements answered from the memo so far.
  int reused() const { return reused_; }
  void CountReuse() { ++reused_; }

 private:
  absl::flat_hash_map<std::string, PipelineMeasurement> seen_;
  int reused_ = 0;
};

// Runs `pipeline` on `module` (consumed; pass a clone to keep the original)
// and measures ir_count, and text_size and alloc_size when `emitter` is not
// null. An empty pipeline measures the module as it is. InvalidArgument for
// a malformed pipeline; the runner's and emitter's errors otherwise.
// `keep_object` (topk, so the wrapper need not optimise and emit its choice
// a second time): the optimised IR is verified first, as the wrapper does
// (Internal "verifier_failed: ..." when broken), and the object is kept.
// `memo` (optional, the same module's earlier measurements): when the
// optimised IR and the codegen options equal an earlier measurement's, its
// figures are returned with `reused` set and nothing is emitted; otherwise
// this measurement is remembered.
absl::StatusOr<PipelineMeasurement> MeasurePipeline(
    std::unique_ptr<llvm::Module> module, absl::string_view pipeline,
    passes::PassRunner& runner, codegen::ObjectEmitter* emitter,
    bool keep_object = false, MeasurementMemo* memo = nullptr);

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_PIPELINE_MEASUREMENT_H_
