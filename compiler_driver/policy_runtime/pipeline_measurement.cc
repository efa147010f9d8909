#include "compiler_driver/policy_runtime/pipeline_measurement.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/ir/collected_diagnostics.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/observation/features.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace phaseloop::policy_runtime {

std::string MeasurementMemo::Key(const std::string& state_bitcode,
                                 const codegen::CodegenOptions& codegen) {
  return ir::ContentHash(state_bitcode) + " " +
         codegen::CodegenOptionsText(codegen);
}

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
    const MeasureOptions& options) {
  MeasurementMemo* memo = options.memo;
  absl::StatusOr<codegen::SplitPipelineText> split =
      codegen::SplitPipeline(pipeline);
  if (!split.ok()) return split.status();
  // An error LLVM reports (a call to an `error` function this pipeline left
  // in, invalid inline asm) fails this measurement alone: without a
  // handler LLVM calls exit(1), and one topk candidate that kept a call -Oz
  // folds away ended the whole compile as optimizer_crashed. Warnings are
  // printed as LLVM prints them (the wrapper leaves them to clang), or,
  // `warnings_fail`, collected and failing the measurement.
  ir::CollectedDiagnostics diagnostics(
      module->getContext(), options.warnings_fail
                                ? ir::CollectedDiagnostics::Others::kCollect
                                : ir::CollectedDiagnostics::Others::kPrint);
  auto failed = [&]() -> absl::Status {
    if (absl::Status s = diagnostics.ErrorsAsStatus("backend_failed");
        !s.ok()) {
      return s;
    }
    if (options.warnings_fail && diagnostics.warnings() > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "backend_warned: ", diagnostics.messages().substr(0, 300)));
    }
    return absl::OkStatus();
  };
  if (!split->ir_pipeline.empty() || runner.always_inline_first()) {
    absl::Status ran = runner.Run(*module, split->ir_pipeline);
    if (!ran.ok()) return ran;
    if (absl::Status s = failed(); !s.ok()) return s;
  }
  // Coroutines the pipeline left unsplit are lowered as the wrapper lowers
  // them before it emits (tu_optimizer): the code generator cannot select
  // the coroutine intrinsics, and emitting them crashed the optimiser
  // (a heap corruption in instruction selection).
  const bool lowered_coroutines = passes::HasUnloweredCoroutines(*module);
  if (lowered_coroutines) {
    absl::Status lowered =
        runner.Run(*module, passes::kCoroutineLoweringPipeline);
    if (!lowered.ok()) {
      return absl::InternalError(
          absl::StrCat("coroutine_lowering_failed: ", lowered.message()));
    }
  }
  PipelineMeasurement m;
  m.ir_count = observation::IrInstructionCount(*module);
  if (emitter == nullptr) return m;
  // An object made after lowering coroutines is not kept (the wrapper's
  // full path makes it, lowering as above). Nor is one with debug
  // information: a clone's debug metadata differs from the module's (a C++
  // unit at -Os -g got more DWARF types), so the object would differ from
  // the one the chosen pipeline gives the module itself, which an outcome
  // cache hit writes: the same compile gave two objects.
  const bool keep_object = options.keep_object && !lowered_coroutines &&
                           module->getNamedMetadata("llvm.dbg.cu") == nullptr;
  if (keep_object) {
    absl::Status verified =
        passes::VerifyPipelineOutput(*module, std::string(pipeline));
    if (!verified.ok()) return verified;
  }
  std::string bitcode;
  if (memo != nullptr || options.optimised_bitcode != nullptr) {
    bitcode = ir::ModuleStateBitcode(*module);
  }
  std::string memo_key;
  if (memo != nullptr) {
    memo_key = MeasurementMemo::Key(bitcode, split->codegen);
  }
  if (options.optimised_bitcode != nullptr) {
    *options.optimised_bitcode = std::move(bitcode);
  }
  if (memo != nullptr) {
    const PipelineMeasurement* earlier = memo->Find(memo_key);
    if (earlier != nullptr) {
      memo->CountReuse();
      return *earlier;
    }
  }
  absl::StatusOr<std::string> object =
      emitter->EmitObject(std::move(module), split->codegen);
  if (absl::Status s = failed(); !s.ok()) return s;
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

namespace {
constexpr char kOzIr[] = "default<Oz>";
constexpr char kOzIrPrefix[] = "default<Oz>,";
}  // namespace

OzContinuation::OzContinuation(std::string oz_bitcode,
                               std::string module_identifier)
    : bitcode_(std::move(oz_bitcode)),
      module_identifier_(std::move(module_identifier)) {}

bool OzContinuation::Continues(absl::string_view pipeline) const {
  if (bitcode_.empty()) return false;
  absl::StatusOr<codegen::SplitPipelineText> split =
      codegen::SplitPipeline(pipeline);
  return split.ok() && (split->ir_pipeline == kOzIr ||
                        absl::StartsWith(split->ir_pipeline, kOzIrPrefix));
}

llvm::Expected<std::unique_ptr<llvm::Module>> OzContinuation::Copy(
    llvm::LLVMContext& context) const {
  return llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode_, module_identifier_), context);
}

void OzContinuation::RememberOz(const PipelineMeasurement& oz,
                                MeasurementMemo* memo) const {
  if (bitcode_.empty() || memo == nullptr) return;
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> copy = Copy(context);
  if (!copy) {
    llvm::consumeError(copy.takeError());
    return;
  }
  memo->Remember(MeasurementMemo::Key(ir::ModuleStateBitcode(**copy), {}), oz);
}

absl::StatusOr<PipelineMeasurement> OzContinuation::Measure(
    absl::string_view pipeline, passes::PassRunner& runner,
    codegen::ObjectEmitter* emitter, MeasurementMemo* memo) const {
  if (!Continues(pipeline)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pipeline '", pipeline, "' does not begin with -Oz's IR pipeline"));
  }
  codegen::SplitPipelineText split = *codegen::SplitPipeline(pipeline);
  const std::string tail =
      split.ir_pipeline == kOzIr
          ? ""
          : split.ir_pipeline.substr(sizeof(kOzIrPrefix) - 1);
  // Declared before the module: it outlives it.
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> copy = Copy(context);
  if (!copy) {
    return absl::InternalError(absl::StrCat("cannot read -Oz's IR back: ",
                                            llvm::toString(copy.takeError())));
  }
  // The whole pipeline begins with -Oz, a standard element: run whole, it
  // gets no always-inliner first, so neither does its tail here.
  const bool always_inline_first = runner.always_inline_first();
  runner.set_always_inline_first(false);
  MeasureOptions options;
  options.memo = memo;
  options.warnings_fail = true;  // a candidate
  absl::StatusOr<PipelineMeasurement> measured = MeasurePipeline(
      std::move(*copy), codegen::JoinPipeline(tail, split.codegen), runner,
      emitter, options);
  runner.set_always_inline_first(always_inline_first);
  return measured;
}

}  // namespace phaseloop::policy_runtime
