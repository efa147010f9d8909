#include "compiler_driver/observation/features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::observation {
namespace {

class FeaturesTest : public ::testing::Test {
 protected:
  // Parses and verifies `ir`; fails the test on any error.
  const llvm::Module& Parse(const std::string& ir) {
    llvm::SMDiagnostic diag;
    modules_.push_back(llvm::parseAssemblyString(ir, diag, context_));
    if (modules_.back() == nullptr) {
      std::string msg;
      llvm::raw_string_ostream os(msg);
      diag.print("test", os);
      ADD_FAILURE() << os.str();
      modules_.back() = std::make_unique<llvm::Module>("empty", context_);
    }
    std::string errors;
    llvm::raw_string_ostream os(errors);
    EXPECT_FALSE(llvm::verifyModule(*modules_.back(), &os)) << os.str();
    return *modules_.back();
  }

  llvm::LLVMContext context_;
  std::vector<std::unique_ptr<llvm::Module>> modules_;
};

// -g adds llvm.dbg.* calls; clang's code is the same with and without it,
// so no feature or count may see them.
TEST_F(FeaturesTest, DebugIntrinsicsChangeNoFeature) {
  const llvm::Module& plain = Parse(R"ir(
define i32 @f(i32 %x) {
entry:
  %y = mul i32 %x, 3
  ret i32 %y
}
)ir");
  const llvm::Module& with_debug = Parse(R"ir(
define i32 @f(i32 %x) !dbg !5 {
entry:
  call void @llvm.dbg.value(metadata i32 %x, metadata !9, metadata !DIExpression()), !dbg !10
  %y = mul i32 %x, 3
  call void @llvm.dbg.value(metadata i32 %y, metadata !11, metadata !DIExpression()), !dbg !10
  ret i32 %y, !dbg !10
}
declare void @llvm.dbg.value(metadata, metadata, metadata)
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "clang", isOptimized: true, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "g.c", directory: "/tmp")
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{!8, !8}
!8 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!9 = !DILocalVariable(name: "x", arg: 1, scope: !5, file: !1, line: 1, type: !8)
!10 = !DILocation(line: 1, column: 1, scope: !5)
!11 = !DILocalVariable(name: "y", scope: !5, file: !1, line: 1, type: !8)
)ir");
  EXPECT_EQ(ComputeAutophase(with_debug), ComputeAutophase(plain));
  EXPECT_EQ(ComputeInstCount(with_debug), ComputeInstCount(plain));
  EXPECT_EQ(IrInstructionCount(with_debug), 2);
  EXPECT_EQ(IrInstructionCount(plain), 2);
}

// Index of `name` in `names`; fails the test (and returns N) if absent.
template <size_t N>
size_t IndexOf(const std::array<std::string_view, N>& names,
               std::string_view name) {
  const size_t i = std::find(names.begin(), names.end(), name) - names.begin();
  EXPECT_LT(i, N) << "no feature named " << name;
  return i;
}

// Feature vector with access by name, so expectations read like features.md.
template <size_t N, const std::array<std::string_view, N>& (*kNames)()>
struct Named {
  std::array<int64_t, N> values;
  int64_t operator[](std::string_view name) const {
    const size_t i = IndexOf(kNames(), name);
    return i < N ? values[i] : -1;
  }
};
using Autophase = Named<kAutophaseDim, AutophaseNames>;
using InstCount = Named<kInstCountDim, InstCountNames>;

// Checks the invariants that tie the three observations together.
void ExpectConsistent(const llvm::Module& module) {
  const Autophase ap{ComputeAutophase(module)};
  const InstCount ic{ComputeInstCount(module)};
  const int64_t ir_count = IrInstructionCount(module);
  EXPECT_EQ(ap["TotalInsts"], ir_count);
  EXPECT_EQ(ic["TotalInsts"], ir_count);
  int64_t opcode_sum = 0;
  for (int i = 3; i < kInstCountDim; ++i) opcode_sum += ic.values[i];
  EXPECT_EQ(opcode_sum, ir_count);
  EXPECT_EQ(ap["TotalBlocks"], ic["TotalBlocks"]);
  EXPECT_EQ(ap["TotalFuncs"], ic["TotalFuncs"]);
  EXPECT_EQ(ap["BBNoPhi"] + ap["BB03Phi"] + ap["BBHiPhi"], ap["TotalBlocks"]);
  EXPECT_EQ(ap["BeginPhi"], ap["BB03Phi"] + ap["BBHiPhi"]);
  // Every "Num<X>Inst" autophase feature equals inst_count's "<X>".
  int opcode_features = 0;
  for (int i = 0; i < kAutophaseDim; ++i) {
    std::string_view name = AutophaseNames()[i];
    if (name.size() > 7 && name.substr(0, 3) == "Num" &&
        name.substr(name.size() - 4) == "Inst") {
      ++opcode_features;
      EXPECT_EQ(ap.values[i], ic[name.substr(3, name.size() - 7)]) << name;
    }
  }
  EXPECT_EQ(opcode_features, 23);
}

TEST(FeatureNamesTest, SizesAndOrder) {
  const auto& ap = AutophaseNames();
  const auto& ic = InstCountNames();
  ASSERT_EQ(ap.size(), 56u);
  ASSERT_EQ(ic.size(), 70u);
  EXPECT_EQ(ap.front(), "BBNumArgsHi");
  EXPECT_EQ(ap.back(), "testUnary");
  EXPECT_EQ(ic.front(), "TotalInsts");
  EXPECT_EQ(ic.back(), "Freeze");
  EXPECT_EQ(std::set<std::string_view>(ap.begin(), ap.end()).size(), 56u);
  EXPECT_EQ(std::set<std::string_view>(ic.begin(), ic.end()).size(), 70u);
}

TEST(FeatureNamesTest, MatchFeaturesMdAtSeveralIndices) {
  const std::pair<int, std::string_view> kAutophase[] = {
      {1, "BBNumArgsLo"},   {3, "onePredOneSuc"},   {10, "morePreds"},
      {14, "BeginPhi"},     {17, "CriticalCount"},  {24, "binaryConstArg"},
      {25, "NumAShrInst"},  {28, "NumAndInst"},     {29, "BlockMid"},
      {30, "BlockLow"},     {31, "NumBitCastInst"}, {40, "NumPHIInst"},
      {49, "NumZExtInst"},  {50, "TotalBlocks"},    {51, "TotalInsts"},
      {52, "TotalMemInst"}, {53, "TotalFuncs"},     {54, "ArgsPhi"}};
  for (const auto& [i, name] : kAutophase) EXPECT_EQ(AutophaseNames()[i], name);
  const std::pair<int, std::string_view> kInstCount[] = {
      {1, "TotalBlocks"}, {2, "TotalFuncs"},     {3, "Ret"},
      {13, "CallBr"},     {14, "FNeg"},          {15, "Add"},
      {33, "Alloca"},     {36, "GetElementPtr"}, {52, "AddrSpaceCast"},
      {55, "ICmp"},       {58, "Call"},          {68, "LandingPad"}};
  for (const auto& [i, name] : kInstCount) EXPECT_EQ(InstCountNames()[i], name);
  // Entry 3 + (opcode - 1) is the LLVM opcode.
  const auto& ic = InstCountNames();
  EXPECT_EQ(ic[3 + llvm::Instruction::Switch - 1], "Switch");
  EXPECT_EQ(ic[3 + llvm::Instruction::PHI - 1], "PHI");
  EXPECT_EQ(ic[3 + llvm::Instruction::Freeze - 1], "Freeze");
}

TEST_F(FeaturesTest, SwitchWithDuplicateCaseTargets) {
  const llvm::Module& m = Parse(R"(
define i32 @sw(i32 %x) {
entry:
  switch i32 %x, label %def [ i32 0, label %a
                              i32 1, label %b
                              i32 7, label %a ]
a:
  br label %exit
b:
  br label %exit
def:
  br label %exit
exit:
  %r = phi i32 [ 10, %a ], [ 20, %b ], [ 30, %def ]
  ret i32 %r
}
)");
  const Autophase ap{ComputeAutophase(m)};
  const InstCount ic{ComputeInstCount(m)};
  EXPECT_EQ(IrInstructionCount(m), 6);  // The switch is one instruction.
  EXPECT_EQ(ic["Switch"], 1);
  EXPECT_EQ(ic["Br"], 3);
  EXPECT_EQ(ic["TotalBlocks"], 5);
  EXPECT_EQ(ap["NumEdges"], 7);  // 4 from the switch (a twice) + 3.
  // %a has two predecessor edges (both from the switch): two critical edges.
  EXPECT_EQ(ap["CriticalCount"], 2);
  EXPECT_EQ(ap["onePred"], 2);
  EXPECT_EQ(ap["twoPred"], 1);
  EXPECT_EQ(ap["morePreds"], 1);
  EXPECT_EQ(ap["oneSuccessor"], 3);
  EXPECT_EQ(ap["twoSuccessor"], 0);
  EXPECT_EQ(ap["onePredOneSuc"], 2);
  EXPECT_EQ(ap["twoPredOneSuc"], 1);
  EXPECT_EQ(ap["BranchCount"], 3);
  EXPECT_EQ(ap["UncondBranches"], 3);
  EXPECT_EQ(ap["const32Bit"], 6);  // 3 case values + 3 phi values.
  EXPECT_EQ(ap["numConstZeroes"], 1);
  EXPECT_EQ(ap["numConstOnes"], 1);
  EXPECT_EQ(ap["ArgsPhi"], 3);
  EXPECT_EQ(ap["BBNumArgsLo"], 1);
  EXPECT_EQ(ap["BBNumArgsHi"], 0);
  EXPECT_EQ(ap["BB03Phi"], 1);
  EXPECT_EQ(ap["BBNoPhi"], 4);
  EXPECT_EQ(ap["BeginPhi"], 1);
  EXPECT_EQ(ap["BlockLow"], 5);
  EXPECT_EQ(ap["TotalFuncs"], 1);
  ExpectConsistent(m);
}

TEST_F(FeaturesTest, LoopCallsConstantsAndCriticalEdges) {
  const llvm::Module& m = Parse(R"(
declare i32 @ext(i64)
declare void @sink(i32)

define i64 @f(i1 %c, i64 %n, ptr %p) {
entry:
  %a = alloca i32
  %v = call i32 @ext(i64 42)
  call void @sink(i32 %v)
  %s = add i64 %n, 1
  %l = load i32, ptr %p
  %z = zext i32 %l to i64
  br i1 %c, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %inc, %loop ]
  %inc = add i64 %i, %s
  %cmp = icmp slt i64 %inc, 100
  br i1 %cmp, label %loop, label %exit
exit:
  %r = phi i64 [ %z, %entry ], [ %inc, %loop ]
  ret i64 %r
}
)");
  const Autophase ap{ComputeAutophase(m)};
  EXPECT_EQ(ap["TotalFuncs"], 1);  // Declarations do not count.
  EXPECT_EQ(ap["TotalInsts"], 13);
  EXPECT_EQ(ap["NumEdges"], 4);
  EXPECT_EQ(ap["CriticalCount"], 4);
  EXPECT_EQ(ap["twoPred"], 2);
  EXPECT_EQ(ap["twoEach"], 1);
  EXPECT_EQ(ap["twoSuccessor"], 2);
  EXPECT_EQ(ap["BranchCount"], 2);
  EXPECT_EQ(ap["UncondBranches"], 0);
  // alloca's implicit `i32 1` array size is a 32-bit constant one.
  EXPECT_EQ(ap["const32Bit"], 1);
  EXPECT_EQ(ap["const64Bit"], 4);  // 42, 1, 0, 100.
  EXPECT_EQ(ap["numConstOnes"], 2);
  EXPECT_EQ(ap["numConstZeroes"], 1);
  EXPECT_EQ(ap["returnInt"], 1);       // @ext, not @sink.
  EXPECT_EQ(ap["binaryConstArg"], 1);  // add %n, 1.
  EXPECT_EQ(ap["testUnary"], 3);       // alloca, load, zext.
  EXPECT_EQ(ap["TotalMemInst"], 4);    // alloca, 2 calls, load.
  EXPECT_EQ(ap["NumCallInst"], 2);
  EXPECT_EQ(ap["NumAddInst"], 2);
  EXPECT_EQ(ap["ArgsPhi"], 4);
  EXPECT_EQ(ap["BBNumArgsLo"], 2);
  EXPECT_EQ(ap["BeginPhi"], 2);
  ExpectConsistent(m);
}

TEST_F(FeaturesTest, PhiArgumentBuckets) {
  const llvm::Module& m = Parse(R"(
define i32 @g(i32 %x) {
entry:
  switch i32 %x, label %m [ i32 1, label %a
                            i32 2, label %b ]
a:
  br label %m
b:
  br label %m
m:
  %p1 = phi i32 [ 1, %entry ], [ 2, %a ], [ 3, %b ]
  %p2 = phi i32 [ 4, %entry ], [ 5, %a ], [ 6, %b ]
  %c = icmp eq i32 %p1, %p2
  br i1 %c, label %q, label %r
q:
  br label %j
r:
  br label %j
j:
  %j1 = phi i32 [ %p1, %q ], [ %p2, %r ]
  %j2 = phi i32 [ 0, %q ], [ 1, %r ]
  %j3 = phi i32 [ 2, %q ], [ 3, %r ]
  %j4 = phi i32 [ 4, %q ], [ 5, %r ]
  %s1 = add i32 %j1, %j2
  %s2 = add i32 %j3, %j4
  %s3 = add i32 %s1, %s2
  ret i32 %s3
}
)");
  const Autophase ap{ComputeAutophase(m)};
  // %m: 2 phis x 3 values = 6 > 5; %j: 4 phis x 2 values = 8 > 5.
  EXPECT_EQ(ap["BBNumArgsHi"], 2);
  EXPECT_EQ(ap["BBNumArgsLo"], 0);
  EXPECT_EQ(ap["BB03Phi"], 1);
  EXPECT_EQ(ap["BBHiPhi"], 1);
  EXPECT_EQ(ap["BeginPhi"], 2);  // Blocks that start with a phi.
  EXPECT_EQ(ap["NumPHIInst"], 6);
  EXPECT_EQ(ap["ArgsPhi"], 14);
  EXPECT_EQ(ap["binaryConstArg"], 0);
  ExpectConsistent(m);
}

TEST_F(FeaturesTest, ConstantWidthsAndUnaryBinary) {
  const llvm::Module& m = Parse(R"(
define i64 @k(i32 %a, float %f) {
  %x = xor i32 %a, -1
  %y = select i1 true, i32 %x, i32 0
  %w = sext i32 %y to i64
  %v = mul i64 %w, 4294967296
  %u = or i64 %v, 0
  %t = trunc i64 %u to i16
  %t2 = add i16 %t, 1
  %e = zext i16 %t2 to i64
  %n = fneg float %f
  ret i64 %e
}
)");
  const Autophase ap{ComputeAutophase(m)};
  EXPECT_EQ(ap["const32Bit"], 2);      // -1, 0.
  EXPECT_EQ(ap["const64Bit"], 2);      // 4294967296, 0.
  EXPECT_EQ(ap["numConstZeroes"], 2);  // i32 0, i64 0.
  EXPECT_EQ(ap["numConstOnes"], 2);    // i1 true, i16 1.
  EXPECT_EQ(ap["binaryConstArg"], 4);  // xor, mul, or, add.
  EXPECT_EQ(ap["testUnary"], 4);       // sext, trunc, zext, fneg.
  for (auto name : {"NumXorInst", "NumSelectInst", "NumSExtInst",
                    "NumTruncInst", "NumZExtInst"}) {
    EXPECT_EQ(ap[name], 1) << name;
  }
  EXPECT_EQ(ap["NumEdges"], 0);
  EXPECT_EQ(ap["BBNoPhi"], 1);
  EXPECT_EQ(InstCount{ComputeInstCount(m)}["FNeg"], 1);
  ExpectConsistent(m);
}

TEST_F(FeaturesTest, ReturnIntOnlyForDirectIntegerCalls) {
  const llvm::Module& m = Parse(R"(
declare i32 @llvm.ctpop.i32(i32)
declare i1 @pred()
declare ptr @getp()
declare float @getf()

define i32 @calls(ptr %fp, i32 %x) {
  %a = call i32 @llvm.ctpop.i32(i32 %x)
  %b = call i1 @pred()
  %c = call ptr @getp()
  %d = call float @getf()
  %e = call i32 %fp(i32 %a)
  ret i32 %e
}
)");
  const Autophase ap{ComputeAutophase(m)};
  EXPECT_EQ(ap["returnInt"], 2);  // ctpop, pred; not ptr/float/indirect.
  EXPECT_EQ(ap["NumCallInst"], 5);
  EXPECT_EQ(ap["TotalMemInst"], 5);
  EXPECT_EQ(ap["TotalFuncs"], 1);
  ExpectConsistent(m);
}

// Builds a function whose blocks have the given instruction counts (each
// count includes the terminator).
std::string BlocksOfSizes(const std::vector<int>& sizes) {
  std::string ir = "define i32 @sizes(i32 %x) {\n";
  int value = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    ir += "b" + std::to_string(b) + ":\n";
    for (int i = 0; i + 1 < sizes[b]; ++i) {
      ir += "  %v" + std::to_string(value++) + " = add i32 %x, %x\n";
    }
    ir += b + 1 < sizes.size() ? "  br label %b" + std::to_string(b + 1) + "\n"
                               : "  ret i32 %x\n";
  }
  return ir + "}\n";
}

TEST_F(FeaturesTest, BlockSizeBuckets) {
  const llvm::Module& m = Parse(BlocksOfSizes({1, 14, 15, 500, 501}));
  const Autophase ap{ComputeAutophase(m)};
  EXPECT_EQ(ap["TotalBlocks"], 5);
  EXPECT_EQ(ap["BlockLow"], 2);  // 1, 14.
  EXPECT_EQ(ap["BlockMid"], 2);  // 15, 500; 501 is in neither bucket.
  EXPECT_EQ(ap["TotalInsts"], 1 + 14 + 15 + 500 + 501);
  EXPECT_EQ(ap["onePredOneSuc"], 3);
  EXPECT_EQ(ap["NumEdges"], 4);
  EXPECT_EQ(ap["CriticalCount"], 0);
  ExpectConsistent(m);
}

TEST_F(FeaturesTest, DeclarationsOnlyModuleIsAllZero) {
  const llvm::Module& m = Parse("declare i32 @f(i32)\n@g = global i32 1\n");
  for (int64_t v : ComputeAutophase(m)) EXPECT_EQ(v, 0);
  for (int64_t v : ComputeInstCount(m)) EXPECT_EQ(v, 0);
  EXPECT_EQ(IrInstructionCount(m), 0);
}

TEST_F(FeaturesTest, MultipleFunctionsAreSummed) {
  const llvm::Module& m = Parse(R"(
define void @a() {
  ret void
}
define i32 @b(i32 %x) {
  %y = shl i32 %x, 2
  %z = lshr i32 %y, 1
  %w = ashr i32 %z, 1
  %v = and i32 %w, 255
  %u = sub i32 0, %v
  ret i32 %u
}
)");
  const Autophase ap{ComputeAutophase(m)};
  const InstCount ic{ComputeInstCount(m)};
  EXPECT_EQ(ic["TotalFuncs"], 2);
  EXPECT_EQ(ic["TotalBlocks"], 2);
  EXPECT_EQ(ic["TotalInsts"], 7);
  EXPECT_EQ(ic["Ret"], 2);
  for (auto name : {"NumShlInst", "NumLShrInst", "NumAShrInst", "NumAndInst",
                    "NumSubInst"}) {
    EXPECT_EQ(ap[name], 1) << name;
  }
  EXPECT_EQ(ap["binaryConstArg"], 5);
  EXPECT_EQ(ap["numConstOnes"], 2);
  EXPECT_EQ(ap["numConstZeroes"], 1);
  ExpectConsistent(m);
}

}  // namespace
}  // namespace phaseloop::observation
