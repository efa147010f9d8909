#include "compiler_driver/cc_wrapper/tu_optimizer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "compiler_driver/cc_wrapper/pipeline_diagnostics.h"
#include "compiler_driver/cc_wrapper/stage_trace.h"
#include "compiler_driver/cc_wrapper/stderr_capture.h"
#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/instrumentation/executed_count.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/pass_extensions.h"
#include "compiler_driver/passes/pass_runner.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::cc_wrapper {
namespace {

bool FaultInjected(const char* fault) {
  const char* value = std::getenv(kInjectFaultEnv);
  return value != nullptr && std::strcmp(value, fault) == 0;
}

void MaybeCrashOrHang() {
  if (FaultInjected("crash")) {
    // Dies the way an uncaught crash does: a sanitizer runtime's handler
    // (ASan prints its report on stderr) must not turn the injected crash
    // into output the user's build would see.
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  if (FaultInjected("hang")) {
    for (;;) pause();
  }
}

// Drops the terminator of the first basic block that has one, as a
// miscompiling pass might.
void BreakIr(llvm::Module& module) {
  for (llvm::Function& f : module) {
    for (llvm::BasicBlock& block : f) {
      if (llvm::Instruction* terminator = block.getTerminator()) {
        terminator->eraseFromParent();
        return;
      }
    }
  }
}

// The object cache's lookup for this unit; test-only passes and fault
// injection are kept out of it (their objects are not the product's).
ObjectCacheLookup LookUpObject(const ObjectCache& cache,
                               const ObjectCacheKeyInput& input) {
  ObjectCacheLookup lookup;
  if (passes::HasPassExtensions() || std::getenv(kInjectFaultEnv) != nullptr) {
    lookup.outcome = "bypassed";
    lookup.note = "object cache bypassed: test-only passes or fault injection";
    return lookup;
  }
  return cache.Lookup(input);
}

// Runs `pipeline`'s IR passes on the module, lowers coroutines it left
// unsplit and verifies the IR; sets `ir_count_after`. Returns the pipeline
// split (its codegen<...> options are the emitter's). Errors carry their
// reason as the first word (OptimizeTranslationUnit).
absl::StatusOr<codegen::SplitPipelineText> RunVerifiedPipeline(
    llvm::Module& module, const std::string& pipeline,
    passes::PassRunner& runner, StageTrace& trace, int64_t* ir_count_after) {
  absl::StatusOr<codegen::SplitPipelineText> split =
      codegen::SplitPipeline(pipeline);
  if (!split.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid_pipeline: ", split.status().message()));
  }
  absl::Status ran = split->ir_pipeline.empty() && !runner.always_inline_first()
                         ? absl::OkStatus()
                         : runner.Run(module, split->ir_pipeline);
  if (!ran.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid_pipeline: ", ran.message()));
  }
  trace.Mark("passes");
  if (passes::HasUnloweredCoroutines(module)) {
    absl::Status lowered =
        runner.Run(module, passes::kCoroutineLoweringPipeline);
    if (!lowered.ok()) {
      return absl::InternalError(
          absl::StrCat("coroutine_lowering_failed: ", lowered.message()));
    }
  }
  if (FaultInjected("break-ir")) BreakIr(module);
  absl::Status verified = passes::VerifyPipelineOutput(module, pipeline);
  if (!verified.ok()) return verified;
  *ir_count_after = observation::IrInstructionCount(module);
  trace.Mark("verify");
  return split;
}

// The pipeline (RunVerifiedPipeline), the module instrumented when
// `count_executed`, and the object.
absl::StatusOr<std::string> OptimizeAndEmit(
    std::unique_ptr<llvm::Module> owned, const std::string& pipeline,
    passes::PassRunner& runner, codegen::ObjectEmitter& emitter,
    bool count_executed, StageTrace& trace, int64_t* ir_count_after) {
  absl::StatusOr<codegen::SplitPipelineText> split =
      RunVerifiedPipeline(*owned, pipeline, runner, trace, ir_count_after);
  if (!split.ok()) return split.status();
  if (count_executed) {
    instrumentation::CountExecutedInstructions(*owned);
    trace.Mark("count");
  }
  absl::StatusOr<std::string> object =
      emitter.EmitObject(std::move(owned), split->codegen);
  trace.Mark("codegen");
  if (!object.ok()) {
    return absl::InternalError(
        absl::StrCat("codegen_failed: ", object.status().message()));
  }
  return object;
}

passes::StandardPipelines PreLinkPipelines(LtoMode lto) {
  return lto == LtoMode::kThin ? passes::StandardPipelines::kThinLtoPreLink
                               : passes::StandardPipelines::kFullLtoPreLink;
}

// Under -flto: the module flags clang adds first, the pipeline
// (RunVerifiedPipeline, on an LTO runner: its standard elements are clang's
// pre-link pipelines; its codegen<...> options are the link's business),
// and the bitcode with its summary (OptimizeModule).
absl::StatusOr<std::string> OptimizeToLtoBitcode(llvm::Module& module,
                                                 const std::string& pipeline,
                                                 passes::PassRunner& runner,
                                                 StageTrace& trace,
                                                 int64_t* ir_count_after) {
  absl::Status flagged = runner.AddLtoModuleFlags(module);
  if (!flagged.ok()) return flagged;
  absl::StatusOr<codegen::SplitPipelineText> split =
      RunVerifiedPipeline(module, pipeline, runner, trace, ir_count_after);
  if (!split.ok()) return split.status();
  absl::StatusOr<std::string> bitcode = runner.WriteLtoBitcode(module);
  trace.Mark("bitcode");
  if (!bitcode.ok()) {
    return absl::InternalError(
        absl::StrCat("bitcode_failed: ", bitcode.status().message()));
  }
  return bitcode;
}

}  // namespace

absl::StatusOr<TuResult> OptimizeTranslationUnit(
    const std::string& bitcode, const std::string& opt_level,
    const codegen::CodegenSettings& codegen, const PolicyRunner& policy,
    bool count_executed, const ObjectCache* cache) {
  // Outlives the module OptimizeModule consumes (it is destroyed there).
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      ir::ParseModule(bitcode, "frontend output", context,
                      /*verify=*/false);  // clang's own output; the result
                                          // of the passes is verified
  if (!module.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid_bitcode: ", module.status().message()));
  }
  return OptimizeModule(std::move(*module), ir::ContentHash(bitcode), opt_level,
                        codegen, policy, count_executed, cache);
}

std::string FrontendModuleHash(const llvm::Module& module) {
  codegen::InitializeTargets();
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  llvm::WriteBitcodeToFile(module, out, /*ShouldPreserveUseListOrder=*/true);
  out.flush();
  return ir::ContentHash(bytes);
}

absl::StatusOr<TuResult> OptimizeModule(
    std::unique_ptr<llvm::Module> module_ptr, const std::string& module_hash,
    const std::string& opt_level, const codegen::CodegenSettings& codegen,
    const PolicyRunner& policy, bool count_executed, const ObjectCache* cache,
    LtoMode lto) {
  if (lto != LtoMode::kNone) count_executed = false;  // see the header
  std::optional<ir::OptLevel> level = ir::ParseOptLevel(opt_level);
  if (!level) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid_opt_level: '", opt_level, "'"));
  }
  StageTrace trace;
  std::unique_ptr<llvm::Module>* module = &module_ptr;
  absl::StatusOr<std::unique_ptr<codegen::ObjectEmitter>> emitter =
      codegen::ObjectEmitter::ForModule(**module, ir::CodegenLevel(*level),
                                        codegen);
  if (!emitter.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("codegen_failed: ", emitter.status().message()));
  }

  trace.Mark("target");
  TuResult result;
  auto policy_start = std::chrono::steady_clock::now();
  result.module_hash = module_hash;
  result.autophase = observation::ComputeAutophase(**module);
  result.inst_count = observation::ComputeInstCount(**module);
  const std::array<int64_t, observation::kInstCountDim>& inst_count =
      result.inst_count;
  passes::PassRunner runner(
      &(*emitter)->target_machine(),
      passes::TuningFor(*level, passes::PipelineFlavor::kClang));
  runner.set_always_inline_first(true);
  PolicyInput input{result.module_hash, &result.autophase, opt_level};
  input.inst_count = &inst_count;
  input.module = module->get();
  input.runner = &runner;
  input.emitter = emitter->get();
  PolicyDecision decision = policy.DecideWithNote(input);
  result.pipeline = std::move(decision.pipeline);
  result.policy_note = std::move(decision.note);
  result.not_applied = std::move(decision.not_applied);
  result.oz_alloc_size = decision.oz_alloc_size;
  result.measured_pipelines = std::move(decision.measured_pipelines);
  result.outcome_cache = std::move(decision.outcome_cache);
  result.policy_time_us = MicrosSince(policy_start);
  result.ir_count_before = inst_count[0];
  trace.Mark("policy");
  MaybeCrashOrHang();
  // Warnings only clang's own pipeline may print (pipeline_diagnostics.h)
  // when another pipeline was chosen: clang's runs on a copy for them
  // alone; what it prints is captured and the child falls back to clang.
  // Not under -flto, where the code generator runs at the link.
  // topk ran clang's pipeline already when it measured it (-Oz): its
  // diagnostics were captured then.
  const std::string clangs = BaselinePipeline(opt_level);
  const bool clangs_ran = std::any_of(
      result.measured_pipelines.begin(), result.measured_pipelines.end(),
      [&](const auto& measured) { return measured.first == clangs; });
  if (lto == LtoMode::kNone && result.pipeline != clangs && !clangs_ran &&
      HasPipelineDependentDiagnostics(**module)) {
    StageTrace unused_trace;
    int64_t unused_count = 0;
    (void)OptimizeAndEmit(
        llvm::CloneModule(**module), clangs, runner, **emitter,
        /*count_executed=*/false, unused_trace, &unused_count);
    trace.Mark("clang-diagnostics");
  }
  ObjectCacheLookup cached;
  if (cache != nullptr) {
    cached = LookUpObject(*cache, {"", module_hash, opt_level, result.pipeline,
                                   codegen, count_executed, lto});
    result.object_cache = cached.outcome;
    result.object_cache_note = cached.note;
    if (cached.hit) {
      result.object = std::move(cached.hit->object);
      result.ir_count_after = cached.hit->ir_count_after;
      result.text_size = cached.hit->text_size;
      result.alloc_size = cached.hit->alloc_size;
      return result;
    }
  }

  if (lto != LtoMode::kNone) {
    passes::PassRunner lto_runner(
        &(*emitter)->target_machine(),
        passes::TuningFor(*level, passes::PipelineFlavor::kClang),
        PreLinkPipelines(lto));
    lto_runner.set_always_inline_first(true);
    absl::StatusOr<std::string> bitcode = OptimizeToLtoBitcode(
        **module, result.pipeline, lto_runner, trace, &result.ir_count_after);
    if (!bitcode.ok()) return bitcode.status();
    result.object = *std::move(bitcode);
    if (result.pipeline.find("codegen<") != std::string::npos) {
      result.policy_note = absl::StrCat(
          result.policy_note, result.policy_note.empty() ? "" : "; ",
          "codegen<...> not applied: under -flto the link generates code");
    }
  } else if (!decision.object.empty() && !count_executed &&
             !FaultInjected("break-ir")) {
    // topk measured this very object: the pipeline on a copy of the module,
    // the IR verified, this emitter. It is written as it is, not made again.
    result.object = std::move(decision.object);
    result.ir_count_after = decision.object_ir_count;
    trace.Mark("kept");
  } else {
    absl::StatusOr<std::string> object =
        OptimizeAndEmit(std::move(*module), result.pipeline, runner, **emitter,
                        count_executed, trace, &result.ir_count_after);
    if (!object.ok()) return object.status();
    result.object = *std::move(object);
  }
  if (lto == LtoMode::kNone) {  // LTO bitcode has no sections to measure
    absl::StatusOr<codegen::ObjectSizes> sizes =
        codegen::MeasureObjectSizes(result.object);
    if (sizes.ok()) {
      result.text_size = sizes->text_size;
      result.alloc_size = sizes->alloc_size;
    }
  }
  // An object whose making printed a diagnostic is not stored: a later hit
  // would skip the backend, and the diagnostic with it (stderr_capture.h).
  if (cache != nullptr && !StderrCapture::ActiveCapturedAnything()) {
    std::string note =
        cache->Store(cached, {result.object, result.ir_count_after,
                              result.text_size, result.alloc_size});
    if (!note.empty()) {
      result.object_cache_note =
          absl::StrCat(result.object_cache_note,
                       result.object_cache_note.empty() ? "" : "; ", note);
    }
  }
  return result;
}

}  // namespace phaseloop::cc_wrapper
