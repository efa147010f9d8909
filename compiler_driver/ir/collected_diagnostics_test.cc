#include "compiler_driver/ir/collected_diagnostics.h"

#include "gtest/gtest.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace phaseloop::ir {
namespace {

class CollectedDiagnosticsTest : public ::testing::Test {
 protected:
  CollectedDiagnosticsTest() : module_("m", context_) {
    function_ = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(context_), false),
        llvm::Function::ExternalLinkage, "f", module_);
  }
  llvm::LLVMContext context_;
  llvm::Module module_;
  llvm::Function* function_;
};

TEST_F(CollectedDiagnosticsTest, WarningsClangWouldNotShowAreDropped) {
  ClangShownWarnings shown;
  shown.pass_failed = false;
  shown.optimization_remarks = false;
  CollectedDiagnostics outer(context_, CollectedDiagnostics::Others::kCollect,
                             &shown);
  {
    // A handler installed over it (a topk measurement) drops the same.
    CollectedDiagnostics inner(context_);
    context_.diagnose(llvm::DiagnosticInfoOptimizationFailure(
        *function_, llvm::DiagnosticLocation(), "loop not vectorized"));
    context_.diagnose(llvm::OptimizationRemarkAnalysis(
        llvm::OptimizationRemarkAnalysis::AlwaysPrint, "why",
        llvm::DiagnosticLocation(), &function_->getEntryBlock()));
    EXPECT_EQ(inner.warnings(), 0);
    EXPECT_EQ(inner.messages(), "");
    // Not hidden: a frame over its limit, and every error.
    context_.diagnose(llvm::DiagnosticInfoStackSize(*function_, 500, 100));
    context_.diagnose(llvm::DiagnosticInfoInlineAsm("bad", llvm::DS_Error));
    EXPECT_EQ(inner.warnings(), 1);
    EXPECT_EQ(inner.errors(), 1);
  }
  EXPECT_EQ(outer.warnings(), 0);  // the inner one took them
}

TEST_F(CollectedDiagnosticsTest, ByDefaultClangShowsEverything) {
  const ClangShownWarnings shown;
  EXPECT_TRUE(shown.Shows(llvm::DiagnosticInfoOptimizationFailure(
      *function_, llvm::DiagnosticLocation(), "loop not vectorized")));
  EXPECT_TRUE(shown.Shows(llvm::DiagnosticInfoStackSize(*function_, 500, 100)));
  ClangShownWarnings quiet;
  quiet.pass_failed = quiet.frame_larger_than = quiet.attribute_warning =
      quiet.optimization_remarks = false;
  EXPECT_FALSE(
      quiet.Shows(llvm::DiagnosticInfoStackSize(*function_, 500, 100)));
  EXPECT_FALSE(
      quiet.Shows(llvm::DiagnosticInfoDontCall("f", "g", llvm::DS_Warning, 0)));
  // An error of a `error` function is the program's, whatever the flags.
  EXPECT_TRUE(
      quiet.Shows(llvm::DiagnosticInfoDontCall("f", "g", llvm::DS_Error, 0)));
  EXPECT_TRUE(
      quiet.Shows(llvm::DiagnosticInfoInlineAsm("w", llvm::DS_Warning)));
}

}  // namespace
}  // namespace phaseloop::ir
