// The pass on small IR modules, compiled and linked by clang-16 and run:
// exact counts, one total per program, exit() and _exit.
#include "compiler_driver/instrumentation/executed_count.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::instrumentation {
namespace {

// A loop of known trip count: entry (1) + 10 x loop (add, icmp, br: its PHI
// and debug intrinsic not counted) + exit (1) = 32.
constexpr char kLoop[] = R"(
define i32 @main() !dbg !5 {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  call void @llvm.dbg.value(metadata i32 %i, metadata !9, metadata !DIExpression()), !dbg !10
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, 10
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}
declare void @llvm.dbg.value(metadata, metadata, metadata)

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "test", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "loop.c", directory: "/tmp")
!2 = !{}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "main", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0, retainedNodes: !2)
!6 = !DISubroutineType(types: !7)
!7 = !{!8}
!8 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!9 = !DILocalVariable(name: "i", scope: !5, file: !1, line: 2, type: !8)
!10 = !DILocation(line: 2, column: 3, scope: !5)
)";

// Two translation units of one program: main (call, ret: 2) calls sum(4)
// in the other, whose loop runs 4 times: entry 1 + 4 x 4 + exit 1 = 18.
constexpr char kMain[] = R"(
declare i32 @sum(i32)
define i32 @main() {
  %s = call i32 @sum(i32 4)
  ret i32 0
}
)";
constexpr char kSum[] = R"(
define i32 @sum(i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi i32 [ 0, %entry ], [ %s.next, %loop ]
  %s.next = add i32 %s, %i
  %i.next = add i32 %i, 1
  %done = icmp eq i32 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %s.next
}
)";

// exit() two calls deep: main (call, ret) + leave (call, ret) + quit
// (call exit, unreachable) = 6, written by the destructor exit() runs.
constexpr char kExitDeep[] = R"(
declare void @exit(i32)
define void @quit() {
  call void @exit(i32 0)
  unreachable
}
define void @leave() {
  call void @quit()
  ret void
}
define i32 @main() {
  call void @leave()
  ret i32 1
}
)";

// _exit skips the destructors: nothing is written.
constexpr char kUnderscoreExit[] = R"(
declare void @_exit(i32)
define i32 @main() {
  call void @_exit(i32 0)
  unreachable
}
)";

class ExecutedCountTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir(); }

  // Parses, instruments and verifies `ir`; writes it to <dir>/<name>.ll.
  std::string Instrument(const char* ir, const std::string& name,
                         CountedModule* counted = nullptr) {
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(ir, error, context_);
    EXPECT_NE(module, nullptr) << error.getMessage().str();
    if (module == nullptr) return "";
    CountedModule result = CountExecutedInstructions(*module);
    if (counted != nullptr) *counted = result;
    std::string problems;
    llvm::raw_string_ostream problems_out(problems);
    EXPECT_FALSE(llvm::verifyModule(*module, &problems_out)) << problems;
    std::string text;
    llvm::raw_string_ostream out(text);
    module->print(out, nullptr);
    const std::string path = dir_ + "/" + name + ".ll";
    std::error_code ec;
    llvm::raw_fd_ostream file(path, ec);
    file << out.str();
    return path;
  }

  // Links the files into a program and runs it with the output file set;
  // returns the output file's lines.
  std::vector<std::string> BuildAndRun(const std::vector<std::string>& files,
                                       int runs = 1) {
    const std::string program = dir_ + "/program";
    std::vector<std::string> link = {"clang-16", "-O0", "-w"};
    link.insert(link.end(), files.begin(), files.end());
    link.insert(link.end(), {"-o", program});
    std::string output;
    EXPECT_EQ(testing::RunCommand(link, &output), 0) << output;
    for (int i = 0; i < runs; ++i) {
      testing::RunCommand(
          {"env", std::string(kOutputEnv) + "=" + Counts(), program}, &output);
    }
    std::vector<std::string> lines;
    std::istringstream in(testing::ReadFileOrEmpty(Counts()));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  std::string Counts() const { return dir_ + "/counts.txt"; }

  // The count of a "<pid> <count>" line.
  static long long CountOf(const std::string& line) {
    std::istringstream in(line);
    long long pid = 0, count = -1;
    in >> pid >> count;
    EXPECT_GT(pid, 0) << line;
    return count;
  }

  llvm::LLVMContext context_;
  std::string dir_;
};

TEST_F(ExecutedCountTest, ALoopOfKnownTripCountCountsExactly) {
  CountedModule counted;
  const std::string loop = Instrument(kLoop, "loop", &counted);
  EXPECT_EQ(counted.blocks, 3);
  EXPECT_EQ(counted.instructions, 5);  // br | add icmp br | ret
  std::vector<std::string> lines = BuildAndRun({loop});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(CountOf(lines[0]), 32);
}

TEST_F(ExecutedCountTest, InstrumentingTwiceChangesNothing) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(kSum, error, context_);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountExecutedInstructions(*module).blocks, 3);
  EXPECT_EQ(CountExecutedInstructions(*module).blocks, 0);
}

TEST_F(ExecutedCountTest, TwoTranslationUnitsGiveOneTotal) {
  std::vector<std::string> lines = BuildAndRun(
      {Instrument(kMain, "main"), Instrument(kSum, "sum")}, /*runs=*/2);
  // One line per run (the destructor kept once), appended.
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(CountOf(lines[0]), 2 + 18);
  EXPECT_EQ(CountOf(lines[1]), 2 + 18);
}

TEST_F(ExecutedCountTest, ExitFromANestedFunctionStillWrites) {
  std::vector<std::string> lines = BuildAndRun({Instrument(kExitDeep, "deep")});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(CountOf(lines[0]), 6);
}

TEST_F(ExecutedCountTest, UnderscoreExitWritesNothing) {
  std::vector<std::string> lines =
      BuildAndRun({Instrument(kUnderscoreExit, "quick")});
  EXPECT_TRUE(lines.empty());
}

TEST_F(ExecutedCountTest, NothingIsWrittenWithoutTheVariable) {
  const std::string program = dir_ + "/program";
  std::string output;
  ASSERT_EQ(testing::RunCommand({"clang-16", "-O0", "-w",
                                 Instrument(kLoop, "loop"), "-o", program},
                                &output),
            0)
      << output;
  EXPECT_EQ(testing::RunCommand({program}, &output), 0) << output;
  EXPECT_EQ(testing::ReadFileOrEmpty(Counts()), "");
}

}  // namespace
}  // namespace phaseloop::instrumentation
