#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_TU_OPTIMIZER_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_TU_OPTIMIZER_H_

// One translation unit, in process: unoptimised bitcode -> features ->
// policy decision -> passes -> verifier -> codegen with clang's settings ->
// object bytes. The wrapper runs this in a forked child (see
// child_process.h), so a crash or hang here costs only a fallback to clang.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/cc_wrapper/object_cache.h"
#include "compiler_driver/cc_wrapper/policy.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/observation/features.h"
#include "llvm/IR/Module.h"

namespace phaseloop::cc_wrapper {

struct TuResult {
  std::string object;  // ELF object bytes (under -flto: LTO bitcode)
  std::string module_hash;
  std::array<int64_t, observation::kAutophaseDim> autophase{};
  std::array<int64_t, observation::kInstCountDim> inst_count{};
  std::string pipeline;
  std::string policy_note;  // how the policy chose (PolicyDecision::note)
  std::string not_applied;  // PolicyDecision::not_applied
  int64_t ir_count_before = 0;
  int64_t ir_count_after = 0;
  int64_t text_size = 0;
  int64_t alloc_size = -1;     // allocated bytes of `object`; -1 unmeasured
  int64_t oz_alloc_size = -1;  // PolicyDecision::oz_alloc_size
  // PolicyDecision::measured_pipelines (topk's measurements).
  std::vector<std::pair<std::string, int64_t>> measured_pipelines;
  std::string outcome_cache;  // PolicyDecision::outcome_cache
  int64_t policy_time_us = 0;
  // With an object cache: "hit" (object and figures from the cache), "miss"
  // (computed, then stored) or "bypassed" (test-only passes or fault
  // injection); "" without one. The note says what went wrong, if anything.
  std::string object_cache;
  std::string object_cache_note;
};

// Failures carry a reason the decision log counts, as the status message's
// first word: "invalid_bitcode: ...", "invalid_pipeline: ...",
// "verifier_failed: ...", "codegen_failed: ...". `count_executed`
// (WrapperConfig::count_executed): the verified module is instrumented to
// count executed IR instructions before codegen
// (instrumentation/executed_count.h); ir_count_after is the policy's, before
// the instrumentation.
absl::StatusOr<TuResult> OptimizeTranslationUnit(
    const std::string& bitcode, const std::string& opt_level,
    const codegen::CodegenSettings& codegen, const PolicyRunner& policy,
    bool count_executed = false, const ObjectCache* cache = nullptr);

// A cache passed where `count_executed` goes would silently become `true`
// and no cache: refused at compile time.
absl::StatusOr<TuResult> OptimizeTranslationUnit(
    const std::string& bitcode, const std::string& opt_level,
    const codegen::CodegenSettings& codegen, const PolicyRunner& policy,
    const ObjectCache* cache) = delete;

// The same for a module already in memory (the in-process frontend's), whose
// module_hash is `module_hash`; the module is consumed. With `cache` (not
// owned; object_cache.h) the object is looked up once the policy chose the
// pipeline, and stored after a miss.
//
// Under -flto (`lto` not kNone) the "object" is clang-16's bitcode for the
// linker's LTO, as `clang -flto[=thin] -c` writes it: the policy decides as
// always, then its pipeline runs with each standard element as clang's
// pre-link half (passes::StandardPipelines) and the module is written with
// its summary; with clang's own pipeline the bytes are clang's. The code
// generator runs at link time, so the pipeline's codegen<...> options do not
// apply (said in the policy note), no size is measured, and `count_executed`
// instruments nothing: the count would be of IR the link still rewrites (the
// harness then reports the metric unavailable).
absl::StatusOr<TuResult> OptimizeModule(
    std::unique_ptr<llvm::Module> module, const std::string& module_hash,
    const std::string& opt_level, const codegen::CodegenSettings& codegen,
    const PolicyRunner& policy, bool count_executed = false,
    const ObjectCache* cache = nullptr, LtoMode lto = LtoMode::kNone);

absl::StatusOr<TuResult> OptimizeModule(std::unique_ptr<llvm::Module> module,
                                        const std::string& module_hash,
                                        const std::string& opt_level,
                                        const codegen::CodegenSettings& codegen,
                                        const PolicyRunner& policy,
                                        const ObjectCache* cache) = delete;

// module_hash of a module the in-process frontend made: the content hash of
// the bitcode the clang binary would have written for it (use-list order
// preserved, as clang's -emit-llvm does; symbol table included, the x86
// target being registered), so decisions join the same modules as before.
std::string FrontendModuleHash(const llvm::Module& module);

// Test hook, for fault-injection tests of the fail-open path only: when
// PHASELOOP_TEST_INJECT_FAULT is "crash" (SIGSEGV) or "hang" (sleeps
// forever) the optimizer does that after the policy decided; "break-ir"
// makes the module invalid after the passes, as a miscompiling pass would.
// Set to anything, it keeps the object cache out (never read nor written).
inline constexpr char kInjectFaultEnv[] = "PHASELOOP_TEST_INJECT_FAULT";

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_TU_OPTIMIZER_H_
