#include "compiler_driver/testing/miscompile/miscompile_pass.h"

#include <algorithm>
#include <vector>

#include "compiler_driver/passes/pass_extensions.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constant.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::testing {
namespace {

// The first add of `function` that CorruptOneLoopAdd would change, or null.
llvm::BinaryOperator* LoopDataAdd(llvm::Function& function) {
  if (function.isDeclaration()) return nullptr;
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  for (llvm::BasicBlock& block : function) {
    if (loops.getLoopFor(&block) == nullptr) continue;
    for (llvm::Instruction& instruction : block) {
      auto* add = llvm::dyn_cast<llvm::BinaryOperator>(&instruction);
      if (add == nullptr || add->getOpcode() != llvm::Instruction::Add ||
          !add->getType()->isIntOrIntVectorTy()) {
        continue;
      }
      if (llvm::isa<llvm::Constant>(add->getOperand(0)) ||
          llvm::isa<llvm::Constant>(add->getOperand(1))) {
        continue;
      }
      return add;
    }
  }
  return nullptr;
}

// "phaseloop-test-miscompile" -> "", "...<function=NAME>" -> NAME; false
// for anything else (PassBuilder then reports an unknown pass).
bool ParseElement(llvm::StringRef element, std::string* function) {
  llvm::StringRef name(kMiscompilePassName);
  if (element == name) {
    function->clear();
    return true;
  }
  if (!element.consume_front(name) || !element.consume_front("<") ||
      !element.consume_back(">")) {
    return false;
  }
  if (!element.consume_front("function=") || element.empty()) return false;
  *function = element.str();
  return true;
}

void RegisterWith(llvm::PassBuilder& builder) {
  builder.registerPipelineParsingCallback(
      [](llvm::StringRef element, llvm::ModulePassManager& manager,
         llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
        std::string function;
        if (!ParseElement(element, &function)) return false;
        manager.addPass(MiscompilePass(std::move(function)));
        return true;
      });
}

// Linked only into test binaries (the library is testonly, alwayslink).
[[maybe_unused]] const bool kRegistered =
    passes::RegisterPassExtension({kMiscompilePassName, &RegisterWith});

}  // namespace

std::string CorruptOneLoopAdd(llvm::Module& module, llvm::StringRef function) {
  std::vector<llvm::Function*> functions;
  for (llvm::Function& f : module) {
    if (function.empty() || f.getName() == function) functions.push_back(&f);
  }
  std::sort(functions.begin(), functions.end(),
            [](const llvm::Function* a, const llvm::Function* b) {
              return a->getName() < b->getName();
            });
  for (llvm::Function* f : functions) {
    llvm::BinaryOperator* add = LoopDataAdd(*f);
    if (add == nullptr) continue;
    std::string before;
    llvm::raw_string_ostream text(before);
    add->print(text);
    text.flush();
    llvm::BinaryOperator* sub =
        llvm::BinaryOperator::Create(llvm::Instruction::Sub, add->getOperand(0),
                                     add->getOperand(1), "", add);
    sub->takeName(add);
    sub->setDebugLoc(add->getDebugLoc());
    add->replaceAllUsesWith(sub);
    add->eraseFromParent();
    llvm::StringRef trimmed = llvm::StringRef(before).trim();
    return ("@" + f->getName() + ": '" + trimmed + "' became a sub").str();
  }
  return "";
}

llvm::PreservedAnalyses MiscompilePass::run(llvm::Module& module,
                                            llvm::ModuleAnalysisManager&) {
  return CorruptOneLoopAdd(module, function_).empty()
             ? llvm::PreservedAnalyses::all()
             : llvm::PreservedAnalyses::none();
}

}  // namespace phaseloop::testing
