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
#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/passes/pass_runner.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

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
// such pipeline's sizes are known without emitting anything: topk (and with
// it eval) and candidate mining measure exactly what they measured before,
// with fewer emissions.
// For one module (one loop over its pipelines); thread-compatible.
class MeasurementMemo {
 public:
  // The key of optimised IR `state_bitcode` (ir::ModuleStateBitcode)
  // emitted with `codegen`.
  static std::string Key(const std::string& state_bitcode,
                         const codegen::CodegenOptions& codegen);
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

// What a measurement keeps and how strictly it treats warnings.
struct MeasureOptions {
  // Keep the object (topk, so the wrapper need not optimise and emit its
  // choice a second time): the optimised IR is verified first, as the
  // wrapper does (Internal "verifier_failed: ..." when broken).
  bool keep_object = false;
  // The same module's earlier measurements (optional): when the optimised
  // IR and the codegen options equal an earlier measurement's, its figures
  // are returned with `reused` set and nothing is emitted; otherwise this
  // measurement is remembered.
  MeasurementMemo* memo = nullptr;
  // With an emitter (optional): set to the optimised IR before code
  // generation as ir::ModuleStateBitcode, for other pipelines to continue
  // from.
  std::string* optimised_bitcode = nullptr;
  // Warnings LLVM reports are printed as it prints them, or, set (a topk
  // candidate beside -Oz), collected and failing the measurement
  // ("backend_warned: ..."): -Oz's own warnings and clang's pipeline's
  // (pipeline_diagnostics) reach clang, and a candidate that keeps a call
  // to a `warning` function -Oz folds away is left out rather than sending
  // the whole compile to clang.
  bool warnings_fail = false;
};

// Runs `pipeline` on `module` (consumed; pass a clone to keep the original)
// and measures ir_count, and text_size and alloc_size when `emitter` is not
// null. An empty pipeline measures the module as it is. InvalidArgument for
// a malformed pipeline; the runner's and emitter's errors otherwise, and
// FailedPrecondition "backend_failed: ..." when LLVM reports an error (the
// pipeline left a call to an `error` function, say; collected, never the
// process's exit).
absl::StatusOr<PipelineMeasurement> MeasurePipeline(
    std::unique_ptr<llvm::Module> module, absl::string_view pipeline,
    passes::PassRunner& runner, codegen::ObjectEmitter* emitter,
    const MeasureOptions& options = {});

// -Oz's optimised IR, kept (as ir::ModuleStateBitcode) so that the
// candidates beginning with -Oz — "default<Oz>,X", or -Oz with other codegen
// options: half of the shipped default's candidates — continue from a copy
// of it instead of running -Oz once more: X and code generation only.
// The copy is parsed into an LLVMContext of its own. Its sizes are the ones
// a whole run gives (all 4,704 pairs measured on the Debian corpus's
// validation and test splits and part of train gave the same object bytes:
// prefix_sharing_benchmark, BENCHMARKS.md), but its IR is not the whole
// run's to the bit (the bitcode reader resets intrinsics' attributes), so
// its object is not kept: a caller that chooses such a candidate makes the
// object the whole way (topk does).
class OzContinuation {
 public:
  // `oz_bitcode`: MeasurePipeline's optimised_bitcode of kOzPipeline on the
  // module named `module_identifier`; empty holds nothing.
  OzContinuation(std::string oz_bitcode, std::string module_identifier);

  // Whether `pipeline`'s IR part is "default<Oz>" or begins with
  // "default<Oz>," and -Oz's IR is held.
  bool Continues(absl::string_view pipeline) const;

  // Tells `memo` that the copy itself, emitted with no codegen option, is
  // -Oz's measurement `oz`: a candidate whose passes leave the copy as it
  // is then costs no code generation.
  void RememberOz(const PipelineMeasurement& oz, MeasurementMemo* memo) const;

  // Measures `pipeline` (one Continues accepts) from a copy of -Oz's IR, as
  // MeasurePipeline does, with no object kept; a candidate, so warnings
  // fail it.
  absl::StatusOr<PipelineMeasurement> Measure(absl::string_view pipeline,
                                              passes::PassRunner& runner,
                                              codegen::ObjectEmitter* emitter,
                                              MeasurementMemo* memo) const;

 private:
  // A copy of -Oz's IR in `context` (which must outlive it).
  llvm::Expected<std::unique_ptr<llvm::Module>> Copy(
      llvm::LLVMContext& context) const;

  std::string bitcode_;
  std::string module_identifier_;
};

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_PIPELINE_MEASUREMENT_H_
