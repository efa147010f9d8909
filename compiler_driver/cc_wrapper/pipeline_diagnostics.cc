#include "compiler_driver/cc_wrapper/pipeline_diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"

namespace phaseloop::cc_wrapper {
namespace {

// Loop metadata forcing a transformation (a pragma's vectorize(enable),
// interleave_count(4), unroll_count(8), unroll(full), distribute(enable)):
// WarnMissedTransformations reports the ones not made. What only allows or
// forbids one (mustprogress, unroll.disable, which clang puts on every loop
// at -O1, vectorize.width 1) can make no warning.
bool ForcesATransformation(const llvm::MDNode& loop) {
  for (const llvm::MDOperand& operand : loop.operands()) {
    const auto* property = llvm::dyn_cast_or_null<llvm::MDNode>(operand.get());
    if (property == nullptr || property->getNumOperands() == 0) continue;
    const auto* name =
        llvm::dyn_cast_or_null<llvm::MDString>(property->getOperand(0).get());
    if (name == nullptr) continue;
    const llvm::StringRef text = name->getString();
    if (text == "llvm.loop.unroll.full" || text == "llvm.loop.unroll.enable" ||
        text == "llvm.loop.unroll_and_jam.enable" ||
        text == "llvm.loop.unroll_and_jam.count") {
      return true;  // #pragma unroll_and_jam [N]: -O2 warns when not done
    }
    if (property->getNumOperands() < 2) continue;
    const auto* value = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(
        property->getOperand(1));
    if (value == nullptr) continue;
    const uint64_t v = value->getZExtValue();
    if ((text == "llvm.loop.vectorize.enable" ||
         text == "llvm.loop.distribute.enable") &&
        v != 0) {
      return true;
    }
    if ((text == "llvm.loop.vectorize.width" ||
         text == "llvm.loop.interleave.count" ||
         text == "llvm.loop.unroll.count") &&
        v > 1) {
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
        if (loop != nullptr && ForcesATransformation(*loop)) return true;
      }
    }
  }
  return false;
}

}  // namespace phaseloop::cc_wrapper
