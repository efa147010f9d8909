#ifndef PHASELOOP_COMPILER_DRIVER_INSTRUMENTATION_EXECUTED_COUNT_H_
#define PHASELOOP_COMPILER_DRIVER_INSTRUMENTATION_EXECUTED_COUNT_H_

// Executed IR instructions: the staging harness's deterministic secondary
// metric beside the time (staging_harness/README.md says what it captures
// and what it misses). The wrapper runs this module pass, only when the lab
// asks for it (PHASELOOP_COUNT_EXECUTED=1, wrapper_config.h), after the
// policy's pipeline and the verifier, before codegen.
//
// At each basic block's entry (after its PHIs and EH pad) the block adds its
// instruction count as it stands after the pipeline (PHIs, debug intrinsics
// and this instrumentation not counted; a vector instruction counts one) to
// one counter per program: `__phaseloop_executed_count`, a hidden
// linkonce_odr i64 in a COMDAT of its own name, so every translation unit of
// a program (of one shared object) shares one counter; the add is a
// monotonic atomicrmw, so threads give a deterministic total.
//
// At exit a destructor in llvm.global_dtors (priority 0: after the
// program's own; keyed to the counter's COMDAT, so the linker keeps one
// entry however many translation units register it, and guarded to write at
// most once) appends `<pid> <count>\n` to the file named by
// PHASELOOP_EXECUTED_OUT when set, created if needed, in one O_APPEND
// write. A process ending by _exit or a signal writes nothing (the harness
// then reports the metric unavailable, never a wrong number); a child forked
// without exec writes its own line, which includes its parent's count
// before the fork. Linux x86-64 (open flags, libc's getenv/open/snprintf/
// write/close/getpid).

#include <cstdint>

#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"

namespace phaseloop::instrumentation {

inline constexpr char kCounterName[] = "__phaseloop_executed_count";
inline constexpr char kOutputEnv[] = "PHASELOOP_EXECUTED_OUT";

// What the pass did to one module.
struct CountedModule {
  int64_t blocks = 0;        // blocks that now add to the counter
  int64_t instructions = 0;  // the instructions they count (static)
};

// Instruments `module` in place (a module with no function definition
// still gets the counter and destructor: harmless, and every object of a
// counting build looks alike). Functions marked naked and
// available_externally ones are left alone.
CountedModule CountExecutedInstructions(llvm::Module& module);

// The same as a new-pass-manager module pass.
class ExecutedCountPass : public llvm::PassInfoMixin<ExecutedCountPass> {
 public:
  llvm::PreservedAnalyses run(llvm::Module& module,
                              llvm::ModuleAnalysisManager& analyses);
};

// Instructions a block counts (PHIs and debug intrinsics excluded).
int64_t CountedInstructions(const llvm::BasicBlock& block);

}  // namespace phaseloop::instrumentation

#endif  // PHASELOOP_COMPILER_DRIVER_INSTRUMENTATION_EXECUTED_COUNT_H_
