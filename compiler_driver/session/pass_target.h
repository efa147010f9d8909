#ifndef PHASELOOP_COMPILER_DRIVER_SESSION_PASS_TARGET_H_
#define PHASELOOP_COMPILER_DRIVER_SESSION_PASS_TARGET_H_

#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/passes/pass_runner.h"

namespace phaseloop::session {

// The target machine IR passes see: clang gives its pipeline the codegen
// target machine; opt builds its own (see ObjectEmitter::opt_target_machine,
// possibly null). Owned by `emitter`.
inline llvm::TargetMachine* PassTargetMachine(codegen::ObjectEmitter& emitter,
                                              passes::PipelineFlavor flavor) {
  return flavor == passes::PipelineFlavor::kOpt ? emitter.opt_target_machine()
                                                : &emitter.target_machine();
}

}  // namespace phaseloop::session

#endif  // PHASELOOP_COMPILER_DRIVER_SESSION_PASS_TARGET_H_
