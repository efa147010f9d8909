#include "compiler_driver/ir/faithful_clone.h"

#include <gtest/gtest.h>

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::ir {
namespace {

// The name a new global called `name` gets in `module`.
std::string NewGlobalName(llvm::Module& module, const std::string& name) {
  auto* global = new llvm::GlobalVariable(
      module, llvm::Type::getInt8Ty(module.getContext()), true,
      llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantInt::get(llvm::Type::getInt8Ty(module.getContext()), 0),
      name);
  return global->getName().str();
}

// What a pass does when it adds a string constant (printf -> puts): a name
// already taken is made unique with the symbol table's counter, which
// CloneModule starts again from 0.
TEST(FaithfulCloneTest, NewNamesInTheCloneAreTheModulesOwn) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(
      "define i32 @f(i32 %x) {\n"
      "  %add = add i32 %x, 1\n"
      "  ret i32 %add\n"
      "}\n",
      error, context);
  ASSERT_NE(module, nullptr);
  // clang's frontend: .str, .str.1, ... .str.5 (the counter at 5).
  for (int i = 0; i < 6; ++i) NewGlobalName(*module, ".str");
  // A pass's first "str" is free; its second is made unique.
  EXPECT_EQ(NewGlobalName(*module, "str"), "str");
  std::unique_ptr<llvm::Module> plain = llvm::CloneModule(*module);
  std::unique_ptr<llvm::Module> faithful = FaithfulClone(*module);
  const std::string in_module = NewGlobalName(*module, "str");
  EXPECT_EQ(in_module, "str.6");
  EXPECT_EQ(NewGlobalName(*faithful, "str"), in_module);
  EXPECT_EQ(NewGlobalName(*plain, "str"), "str.1");  // what went wrong
}

}  // namespace
}  // namespace phaseloop::ir
