#include "compiler_driver/ir/faithful_clone.h"

#include <gtest/gtest.h>

#include "compiler_driver/ir/module_hash.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::ir {
namespace {

std::unique_ptr<llvm::Module> Parse(const char* ir,
                                    llvm::LLVMContext& context) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(ir, error, context);
  EXPECT_NE(module, nullptr) << error.getMessage().str();
  return module;
}

// The name a new global called `name` gets in `module`.
std::string NewGlobalName(llvm::Module& module, const std::string& name) {
  llvm::Type* byte = llvm::Type::getInt8Ty(module.getContext());
  auto* global = new llvm::GlobalVariable(
      module, byte, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantInt::get(byte, 0), name);
  return global->getName().str();
}

std::unique_ptr<llvm::Module> CopyOf(const llvm::Module& module,
                                     llvm::LLVMContext& context) {
  absl::StatusOr<std::unique_ptr<llvm::Module>> copy =
      FaithfulCopier(module).Copy(context);
  EXPECT_TRUE(copy.ok()) << copy.status();
  return copy.ok() ? *std::move(copy) : nullptr;
}

// What a pass does when it adds a string constant (printf -> puts): a name
// already taken is made unique with the symbol table's counter, which
// CloneModule starts again from 0.
TEST(FaithfulCopierTest, NewNamesInTheCopyAreTheModulesOwn) {
  llvm::LLVMContext context, other;
  std::unique_ptr<llvm::Module> module = Parse(
      "define i32 @f(i32 %x) {\n"
      "  %add = add i32 %x, 1\n"
      "  ret i32 %add\n"
      "}\n",
      context);
  ASSERT_NE(module, nullptr);
  // clang's frontend: .str, .str.1, ... .str.5 (the counter at 5).
  for (int i = 0; i < 6; ++i) NewGlobalName(*module, ".str");
  // A pass's first "str" is free; its second is made unique.
  EXPECT_EQ(NewGlobalName(*module, "str"), "str");
  std::unique_ptr<llvm::Module> plain = llvm::CloneModule(*module);
  std::unique_ptr<llvm::Module> same_context = CopyOf(*module, context);
  std::unique_ptr<llvm::Module> apart = CopyOf(*module, other);
  ASSERT_NE(same_context, nullptr);
  ASSERT_NE(apart, nullptr);
  const std::string in_module = NewGlobalName(*module, "str");
  EXPECT_EQ(in_module, "str.6");
  EXPECT_EQ(NewGlobalName(*same_context, "str"), in_module);
  EXPECT_EQ(NewGlobalName(*apart, "str"), in_module);
  EXPECT_EQ(NewGlobalName(*plain, "str"), "str.1");  // what went wrong
}

// Passes and instruction selection walk a value's uses in their list's
// order: the copy keeps it (ModuleStateHash covers it), CloneModule does
// not.
TEST(FaithfulCopierTest, TheCopyKeepsUseListOrder) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Parse(
      "define i32 @f(i32 %x) {\n"
      "  %a = add i32 %x, 1\n"
      "  %b = mul i32 %x, 2\n"
      "  %c = sub i32 %x, 3\n"
      "  %d = add i32 %a, %b\n"
      "  %e = add i32 %d, %c\n"
      "  ret i32 %e\n"
      "  uselistorder i32 %x, { 2, 0, 1 }\n"
      "}\n",
      context);
  ASSERT_NE(module, nullptr);
  std::unique_ptr<llvm::Module> copy = CopyOf(*module, context);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(ModuleStateHash(*copy), ModuleStateHash(*module));
  EXPECT_NE(ModuleStateHash(*llvm::CloneModule(*module)),
            ModuleStateHash(*module));
}

}  // namespace
}  // namespace phaseloop::ir
