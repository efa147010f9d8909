#include "compiler_driver/cc_wrapper/pipeline_diagnostics.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/SourceMgr.h"

namespace phaseloop::cc_wrapper {
namespace {

// A loop whose latch carries `loop_properties` (metadata nodes), in a
// function with `attributes`.
bool Triggers(const std::string& loop_properties,
              const std::string& attributes = "") {
  const std::string ir = "define void @f(i32 %n) " + attributes +
                         " {\n"
                         "entry:\n  br label %loop\n"
                         "loop:\n  %i = phi i32 [ 0, %entry ], [ %j, %loop ]\n"
                         "  %j = add i32 %i, 1\n  %c = icmp slt i32 %j, %n\n"
                         "  br i1 %c, label %loop, label %exit, !llvm.loop !0\n"
                         "exit:\n  ret void\n}\n"
                         "!0 = distinct !{!0" +
                         loop_properties + "}\n" +
                         "!1 = !{!\"llvm.loop.mustprogress\"}\n"
                         "!2 = !{!\"llvm.loop.unroll.disable\"}\n"
                         "!3 = !{!\"llvm.loop.vectorize.enable\", i1 true}\n"
                         "!4 = !{!\"llvm.loop.vectorize.width\", i32 1}\n"
                         "!5 = !{!\"llvm.loop.unroll.count\", i32 8}\n"
                         "!6 = !{!\"llvm.loop.unroll.full\"}\n"
                         "!7 = !{!\"llvm.loop.unroll_and_jam.count\", i32 4}\n";
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(ir, error, context);
  EXPECT_NE(module, nullptr) << error.getMessage().str();
  return module != nullptr && HasPipelineDependentDiagnostics(*module);
}

TEST(PipelineDiagnosticsTest, OnlyWhatForcesATransformationOrWarnsCounts) {
  EXPECT_FALSE(Triggers(""));
  // mustprogress on every loop at -O2, unroll.disable on every loop at
  // -O1, vectorize(disable)'s width 1: nothing can warn.
  EXPECT_FALSE(Triggers(", !1, !2, !4"));
  EXPECT_TRUE(Triggers(", !1, !3"));  // vectorize(enable)
  EXPECT_TRUE(Triggers(", !5"));      // unroll_count(8)
  EXPECT_TRUE(Triggers(", !6"));      // unroll(full)
  EXPECT_TRUE(Triggers(", !7"));      // unroll_and_jam(4)
  EXPECT_TRUE(Triggers("", "\"warn-stack-size\"=\"100\""));
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
