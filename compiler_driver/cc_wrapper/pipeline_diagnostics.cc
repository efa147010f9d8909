#include "compiler_driver/cc_wrapper/pipeline_diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"

namespace phaseloop::cc_wrapper {
namespace {

// Loop metadata asking for a transformation (vectorize, interleave,
// unroll, distribute, ...): WarnMissedTransformations reports the ones not
// made. llvm.loop.mustprogress asks for none.
bool AsksForATransformation(const llvm::MDNode& loop) {
  for (const llvm::MDOperand& operand : loop.operands()) {
    const auto* property = llvm::dyn_cast_or_null<llvm::MDNode>(operand.get());
    if (property == nullptr || property->getNumOperands() == 0) continue;
    const auto* name =
        llvm::dyn_cast_or_null<llvm::MDString>(property->getOperand(0).get());
    if (name == nullptr) continue;
    const llvm::StringRef text = name->getString();
    if (text.startswith("llvm.loop.") && text != "llvm.loop.mustprogress") {
      return true;
    }
  }
  return false;
}

}  // namespace

bool HasPipelineDependentDiagnostics(const llvm::Module& module) {
  for (const llvm::Function& function : module) {
    if (function.hasFnAttribute("warn-stack-size") ||
        function.hasFnAttribute("dontcall-error") ||
        function.hasFnAttribute("dontcall-warn")) {
      return true;
    }
    for (const llvm::BasicBlock& block : function) {
      for (const llvm::Instruction& instruction : block) {
        const llvm::MDNode* loop =
            instruction.getMetadata(llvm::LLVMContext::MD_loop);
        if (loop != nullptr && AsksForATransformation(*loop)) return true;
      }
    }
  }
  return false;
}

}  // namespace phaseloop::cc_wrapper
