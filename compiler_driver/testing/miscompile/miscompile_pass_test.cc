#include "compiler_driver/testing/miscompile/miscompile_pass.h"

#include <memory>
#include <string>

#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/passes/pipeline_check.h"
#include "gtest/gtest.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::testing {
namespace {

// Two summing loops (b_sum before a_sum in the file), each with a counter
// step first in its block, and a non-constant add outside any loop.
constexpr char kTwoSums[] = R"(
define i32 @b_sum(ptr %p, i32 %n) {
entry:
  %twice = add i32 %n, %n
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s.next, %loop ]
  %i.next = add nsw i32 %i, 1
  %gep = getelementptr i32, ptr %p, i32 %i
  %x = load i32, ptr %gep
  %s.next = add nsw i32 %s, %x
  %done = icmp sge i32 %i.next, %twice
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %s.next
}

define i32 @a_sum(ptr %p, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi i32 [ 0, %entry ], [ %t.next, %loop ]
  %i.next = add nuw i32 %i, 1
  %gep = getelementptr i32, ptr %p, i32 %i
  %x = load i32, ptr %gep
  %t.next = add nuw nsw i32 %s, %x
  %done = icmp sge i32 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %t.next
}
)";

// Only a counter: nothing to corrupt.
constexpr char kCounterOnly[] = R"(
define i32 @count(i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i32 %i, 1
  %done = icmp sge i32 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %i.next
}
)";

std::unique_ptr<llvm::Module> Parse(const char* text,
                                    llvm::LLVMContext& context) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, error, context);
  EXPECT_NE(module, nullptr) << error.getMessage().str();
  return module;
}

std::string Print(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return out.str();
}

std::string PrintFunction(const llvm::Module& module, const char* name) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.getFunction(name)->print(out);
  return out.str();
}

absl::Status RunPipeline(llvm::Module& module, const std::string& pipeline) {
  passes::PassRunner runner(
      nullptr,
      passes::TuningFor(ir::OptLevel::kO3, passes::PipelineFlavor::kOpt));
  return runner.Run(module, pipeline);
}

TEST(MiscompilePassTest, CorruptsTheDataAddOfTheFirstFunctionByName) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Parse(kTwoSums, context);
  const std::string b_before = PrintFunction(*module, "b_sum");
  ASSERT_TRUE(RunPipeline(*module, kMiscompilePassName).ok());
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  const std::string a = PrintFunction(*module, "a_sum");
  // The sum became a sub, without wrap flags; the counter step did not.
  EXPECT_NE(a.find("%t.next = sub i32 %s, %x"), std::string::npos) << a;
  EXPECT_NE(a.find("%i.next = add nuw i32 %i, 1"), std::string::npos) << a;
  EXPECT_EQ(PrintFunction(*module, "b_sum"), b_before);
}

TEST(MiscompilePassTest, FunctionParameterPicksTheFunction) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Parse(kTwoSums, context);
  const std::string a_before = PrintFunction(*module, "a_sum");
  ASSERT_TRUE(RunPipeline(*module,
                          std::string(kMiscompilePassName) + "<function=b_sum>")
                  .ok());
  const std::string b = PrintFunction(*module, "b_sum");
  EXPECT_NE(b.find("%s.next = sub i32 %s, %x"), std::string::npos) << b;
  // Outside the loop: untouched.
  EXPECT_NE(b.find("%twice = add i32 %n, %n"), std::string::npos) << b;
  EXPECT_EQ(PrintFunction(*module, "a_sum"), a_before);
}

TEST(MiscompilePassTest, SaysWhatItChangedAndIsDeterministic) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> first = Parse(kTwoSums, context);
  std::unique_ptr<llvm::Module> second = Parse(kTwoSums, context);
  EXPECT_EQ(CorruptOneLoopAdd(*first),
            "@a_sum: '%t.next = add nuw nsw i32 %s, %x' became a sub");
  CorruptOneLoopAdd(*second);
  EXPECT_EQ(Print(*first), Print(*second));
}

TEST(MiscompilePassTest, NoDataAddInALoopLeavesTheModuleUnchanged) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Parse(kCounterOnly, context);
  const std::string before = Print(*module);
  EXPECT_EQ(CorruptOneLoopAdd(*module), "");
  EXPECT_EQ(Print(*module), before);
  std::unique_ptr<llvm::Module> sums = Parse(kTwoSums, context);
  EXPECT_EQ(CorruptOneLoopAdd(*sums, "no_such_function"), "");
}

TEST(MiscompilePassTest, RunsAfterAStandardPipeline) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Parse(kTwoSums, context);
  ASSERT_TRUE(
      RunPipeline(*module, std::string("default<O3>,") + kMiscompilePassName)
          .ok());
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  EXPECT_NE(PrintFunction(*module, "a_sum").find(" sub "), std::string::npos)
      << PrintFunction(*module, "a_sum");
}

TEST(MiscompilePassTest, BadParameterIsAParseError) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Parse(kTwoSums, context);
  absl::Status status =
      RunPipeline(*module, std::string(kMiscompilePassName) + "<bogus>");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

// Linked in, the pass is one a policy may name (in this test binary only;
// compiler_driver/passes/pipeline_check_test shows it refused elsewhere).
TEST(MiscompilePassTest, PoliciesMayNameItWhereLinked) {
  EXPECT_TRUE(
      passes::CheckPolicyPipeline("default<O3>,phaseloop-test-miscompile")
          .ok());
  EXPECT_TRUE(
      passes::CheckPolicyPipeline("phaseloop-test-miscompile<function=main>")
          .ok());
  EXPECT_FALSE(passes::CheckPolicyPipeline("phaseloop-test-other").ok());
}

}  // namespace
}  // namespace phaseloop::testing
