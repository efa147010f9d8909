#ifndef PHASELOOP_COMPILER_DRIVER_IR_DEBUG_INTRINSICS_H_
#define PHASELOOP_COMPILER_DRIVER_IR_DEBUG_INTRINSICS_H_

// What -g adds to a module's instructions: calls of llvm.dbg.declare,
// llvm.dbg.value, llvm.dbg.label. clang's code is the same with and without
// -g, so nothing a policy decides from (features, instruction counts,
// budgets, call-site descriptions) may count them.

#include <cstdint>

#include "llvm/IR/Function.h"
#include "llvm/IR/IntrinsicInst.h"

namespace phaseloop::ir {

inline bool IsDebugIntrinsic(const llvm::Instruction& instruction) {
  return llvm::isa<llvm::DbgInfoIntrinsic>(instruction);
}

// Function::getInstructionCount() without the debug intrinsics (0 for a
// declaration).
inline int64_t InstructionCountWithoutDebug(const llvm::Function& function) {
  int64_t count = 0;
  for (const llvm::BasicBlock& block : function) {
    for (const llvm::Instruction& instruction : block) {
      if (!IsDebugIntrinsic(instruction)) ++count;
    }
  }
  return count;
}

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_DEBUG_INTRINSICS_H_
