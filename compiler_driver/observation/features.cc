#include "compiler_driver/observation/features.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler_driver/ir/debug_intrinsics.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace phaseloop::observation {
namespace {

using llvm::Instruction;

// ---------------------------------------------------------------------------
// Opcode numbering (inst_count).

// LLVM opcodes are numbered 1..kNumOpcodes (Instruction.def).
constexpr int kNumOpcodes = Instruction::OtherOpsEnd - 1;
static_assert(kNumOpcodes == 67, "LLVM 16 has 67 IR opcodes");
static_assert(kInstCountDim == 3 + kNumOpcodes);

// Our names, as written in features.md (checked against LLVM below).
// clang-format off
constexpr std::array<std::string_view, kInstCountDim> kInstCountNames = {
    "TotalInsts",     "TotalBlocks",    "TotalFuncs",    "Ret",
    "Br",             "Switch",         "IndirectBr",    "Invoke",
    "Resume",         "Unreachable",    "CleanupRet",    "CatchRet",
    "CatchSwitch",    "CallBr",         "FNeg",          "Add",
    "FAdd",           "Sub",            "FSub",          "Mul",
    "FMul",           "UDiv",           "SDiv",          "FDiv",
    "URem",           "SRem",           "FRem",          "Shl",
    "LShr",           "AShr",           "And",           "Or",
    "Xor",            "Alloca",         "Load",          "Store",
    "GetElementPtr",  "Fence",          "AtomicCmpXchg", "AtomicRMW",
    "Trunc",          "ZExt",           "SExt",          "FPToUI",
    "FPToSI",         "UIToFP",         "SIToFP",        "FPTrunc",
    "FPExt",          "PtrToInt",       "IntToPtr",      "BitCast",
    "AddrSpaceCast",  "CleanupPad",     "CatchPad",      "ICmp",
    "FCmp",           "PHI",            "Call",          "Select",
    "UserOp1",        "UserOp2",        "VAArg",         "ExtractElement",
    "InsertElement",  "ShuffleVector",  "ExtractValue",  "InsertValue",
    "LandingPad",     "Freeze"
};
// clang-format on

// LLVM's own opcode numbers and names, in Instruction.def order.
constexpr std::array<unsigned, kNumOpcodes> kLlvmOpcodeNumbers = {
#define HANDLE_INST(N, OPC, CLASS) N,
#include "llvm/IR/Instruction.def"
};
constexpr std::array<std::string_view, kNumOpcodes> kLlvmOpcodeNames = {
#define HANDLE_INST(N, OPC, CLASS) #OPC,
#include "llvm/IR/Instruction.def"
};

constexpr bool OpcodeNamesMatchLlvm() {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (kLlvmOpcodeNumbers[i] != static_cast<unsigned>(i + 1)) return false;
    if (kLlvmOpcodeNames[i] != kInstCountNames[3 + i]) return false;
  }
  return true;
}
static_assert(OpcodeNamesMatchLlvm(),
              "inst_count names must follow llvm/IR/Instruction.def order");

// Per-opcode counters, indexed directly by Instruction::getOpcode().
using OpcodeCounts = std::array<int64_t, Instruction::OtherOpsEnd>;

// ---------------------------------------------------------------------------
// Autophase feature indices and names, generated from one list so that the
// enum and the names cannot drift apart. Order = features.md.

// clang-format off
#define PHASELOOP_AUTOPHASE_FEATURES(X)                                      \
  X(BBNumArgsHi) X(BBNumArgsLo) X(onePred) X(onePredOneSuc)                  \
  X(onePredTwoSuc) X(oneSuccessor) X(twoPred) X(twoPredOneSuc) X(twoEach)    \
  X(twoSuccessor) X(morePreds) X(BB03Phi) X(BBHiPhi) X(BBNoPhi) X(BeginPhi)  \
  X(BranchCount) X(returnInt) X(CriticalCount) X(NumEdges) X(const32Bit)     \
  X(const64Bit) X(numConstZeroes) X(numConstOnes) X(UncondBranches)          \
  X(binaryConstArg) X(NumAShrInst) X(NumAddInst) X(NumAllocaInst)           \
  X(NumAndInst) X(BlockMid) X(BlockLow) X(NumBitCastInst) X(NumBrInst)       \
  X(NumCallInst) X(NumGetElementPtrInst) X(NumICmpInst) X(NumLShrInst)       \
  X(NumLoadInst) X(NumMulInst) X(NumOrInst) X(NumPHIInst) X(NumRetInst)      \
  X(NumSExtInst) X(NumSelectInst) X(NumShlInst) X(NumStoreInst)              \
  X(NumSubInst) X(NumTruncInst) X(NumXorInst) X(NumZExtInst) X(TotalBlocks)  \
  X(TotalInsts) X(TotalMemInst) X(TotalFuncs) X(ArgsPhi) X(testUnary)
// clang-format on

namespace ap {
#define PHASELOOP_ENUM_ENTRY(name) name,
enum Index : int { PHASELOOP_AUTOPHASE_FEATURES(PHASELOOP_ENUM_ENTRY) kEnd };
#undef PHASELOOP_ENUM_ENTRY
}  // namespace ap
static_assert(ap::kEnd == kAutophaseDim);

#define PHASELOOP_NAME_ENTRY(name) #name,
constexpr std::array<std::string_view, kAutophaseDim> kAutophaseNames = {
    PHASELOOP_AUTOPHASE_FEATURES(PHASELOOP_NAME_ENTRY)};
#undef PHASELOOP_NAME_ENTRY
#undef PHASELOOP_AUTOPHASE_FEATURES

// Autophase features that are plain opcode counts: "Num<Opcode>Inst".
struct OpcodeFeature {
  ap::Index index;
  unsigned opcode;
};
constexpr std::array<OpcodeFeature, 23> kAutophaseOpcodeFeatures = {{
    {ap::NumAShrInst, Instruction::AShr},
    {ap::NumAddInst, Instruction::Add},
    {ap::NumAllocaInst, Instruction::Alloca},
    {ap::NumAndInst, Instruction::And},
    {ap::NumBitCastInst, Instruction::BitCast},
    {ap::NumBrInst, Instruction::Br},
    {ap::NumCallInst, Instruction::Call},
    {ap::NumGetElementPtrInst, Instruction::GetElementPtr},
    {ap::NumICmpInst, Instruction::ICmp},
    {ap::NumLShrInst, Instruction::LShr},
    {ap::NumLoadInst, Instruction::Load},
    {ap::NumMulInst, Instruction::Mul},
    {ap::NumOrInst, Instruction::Or},
    {ap::NumPHIInst, Instruction::PHI},
    {ap::NumRetInst, Instruction::Ret},
    {ap::NumSExtInst, Instruction::SExt},
    {ap::NumSelectInst, Instruction::Select},
    {ap::NumShlInst, Instruction::Shl},
    {ap::NumStoreInst, Instruction::Store},
    {ap::NumSubInst, Instruction::Sub},
    {ap::NumTruncInst, Instruction::Trunc},
    {ap::NumXorInst, Instruction::Xor},
    {ap::NumZExtInst, Instruction::ZExt},
}};

// Checks that the feature at `index` is named "Num" + LLVM name + "Inst".
constexpr bool OpcodeFeatureNamesMatch() {
  constexpr std::string_view kPrefix = "Num", kSuffix = "Inst";
  for (const OpcodeFeature& f : kAutophaseOpcodeFeatures) {
    std::string_view name = kAutophaseNames[f.index];
    std::string_view opcode = kLlvmOpcodeNames[f.opcode - 1];
    if (name.size() != kPrefix.size() + opcode.size() + kSuffix.size() ||
        name.substr(0, kPrefix.size()) != kPrefix ||
        name.substr(kPrefix.size(), opcode.size()) != opcode ||
        name.substr(kPrefix.size() + opcode.size()) != kSuffix) {
      return false;
    }
  }
  return true;
}
static_assert(OpcodeFeatureNamesMatch());

// ---------------------------------------------------------------------------
// Per-block helpers for autophase.

// CFG shape of one block. Predecessors and successors are counted with
// multiplicity, as LLVM's pred_iterator / getNumSuccessors() do (and as
// CompilerGym does): `br i1 %c, label %x, label %x` gives %x two predecessors
// and its block two successors; so does a switch with two cases to one block.
void CountBlockShape(const llvm::BasicBlock& bb,
                     std::array<int64_t, kAutophaseDim>& f) {
  const Instruction* term = bb.getTerminator();
  const unsigned succs = term != nullptr ? term->getNumSuccessors() : 0;
  const unsigned preds = llvm::pred_size(&bb);

  f[ap::NumEdges] += succs;
  // Critical edge: llvm::isCriticalEdge with AllowIdenticalEdges = false,
  // i.e. the source has >= 2 successors and the destination >= 2
  // predecessors (both with multiplicity).
  if (succs > 1) {
    for (unsigned i = 0; i < succs; ++i) {
      if (llvm::isCriticalEdge(term, i)) ++f[ap::CriticalCount];
    }
  }

  if (succs == 1) ++f[ap::oneSuccessor];
  if (succs == 2) ++f[ap::twoSuccessor];
  if (preds == 1) ++f[ap::onePred];
  if (preds == 2) ++f[ap::twoPred];
  if (preds > 2) ++f[ap::morePreds];
  if (preds == 1 && succs == 1) ++f[ap::onePredOneSuc];
  if (preds == 1 && succs == 2) ++f[ap::onePredTwoSuc];
  if (preds == 2 && succs == 1) ++f[ap::twoPredOneSuc];
  if (preds == 2 && succs == 2) ++f[ap::twoEach];
}

// Integer-constant operands. Only scalar llvm::ConstantInt operands count
// (not vector splats, not constants nested in constant expressions). Every
// operand of every instruction is looked at, including phi incoming values,
// switch case values, call arguments and the implicit `i32 1` array size of
// a plain `alloca` (CompilerGym counts all of these too). Constants of other
// widths (e.g. i1 true, i16 1) count as zero/one but not as 32/64-bit.
void CountConstantOperands(const Instruction& inst,
                           std::array<int64_t, kAutophaseDim>& f) {
  for (const llvm::Use& use : inst.operands()) {
    const auto* ci = llvm::dyn_cast<llvm::ConstantInt>(use.get());
    if (ci == nullptr) continue;
    const unsigned width = ci->getBitWidth();
    if (width == 32) {
      ++f[ap::const32Bit];
    } else if (width == 64) {
      ++f[ap::const64Bit];
    }
    if (ci->isOne()) {
      ++f[ap::numConstOnes];
    } else if (ci->isZero()) {
      ++f[ap::numConstZeroes];
    }
  }
}

}  // namespace

const std::array<std::string_view, kAutophaseDim>& AutophaseNames() {
  return kAutophaseNames;
}

const std::array<std::string_view, kInstCountDim>& InstCountNames() {
  return kInstCountNames;
}

// Definition choices (where features.md is ambiguous we follow CompilerGym's
// autophase InstCount pass, so values stay comparable with published work):
//  - TotalFuncs: functions with a body only (features.md). NB: CompilerGym's
//    Autophase visits every function of the module, so its TotalFuncs also
//    counts declarations; ours does not.
//  - BeginPhi: blocks whose *first* instruction is a phi (at most one per
//    block), as CompilerGym computes it; not the number of leading phis.
//  - BBNumArgsHi/Lo: per block, the sum of incoming values over all its phis
//    is > 5 / in [1, 5]. ArgsPhi: incoming values over all phis.
//  - BB03Phi / BBHiPhi / BBNoPhi: 1-3 / > 3 / 0 phis in the block.
//  - BranchCount / UncondBranches: `br` instructions only (not switch,
//    indirectbr, invoke, callbr).
//  - returnInt: `call` instructions (not invoke/callbr) whose callee is a
//    known function (CallBase::getCalledFunction, so indirect calls do not
//    count; intrinsics do) returning any integer type, i1 included.
//  - testUnary: instructions that are llvm::UnaryInstruction, i.e. fneg,
//    casts, alloca, load, va_arg, extractvalue and freeze (CompilerGym).
//  - binaryConstArg: llvm::BinaryOperator with either operand any
//    llvm::Constant (ints, fp, undef/poison, globals, constant exprs).
//  - BlockLow / BlockMid: < 15 / 15-500 instructions (phis and terminator
//    included); larger blocks are in neither bucket.
//  - TotalMemInst: alloca + load + store + getelementptr + call + invoke
//    (CompilerGym's set; fences and atomics are not included).
//  - Edge/pred/successor counts: with multiplicity, see CountBlockShape.
std::array<int64_t, kAutophaseDim> ComputeAutophase(
    const llvm::Module& module) {
  std::array<int64_t, kAutophaseDim> f{};
  OpcodeCounts ops{};

  for (const llvm::Function& fn : module) {
    if (fn.isDeclaration()) continue;
    ++f[ap::TotalFuncs];
    for (const llvm::BasicBlock& bb : fn) {
      ++f[ap::TotalBlocks];
      CountBlockShape(bb, f);

      int64_t size = 0;
      int64_t phis = 0;
      int64_t phi_args = 0;
      for (const Instruction& inst : bb) {
        if (ir::IsDebugIntrinsic(inst)) continue;  // -g changes no feature
        const unsigned opcode = inst.getOpcode();
        if (opcode < ops.size()) ++ops[opcode];
        if (size == 0 && opcode == Instruction::PHI) ++f[ap::BeginPhi];
        ++size;

        CountConstantOperands(inst, f);
        switch (opcode) {
          case Instruction::PHI:
            ++phis;
            phi_args += llvm::cast<llvm::PHINode>(inst).getNumIncomingValues();
            break;
          case Instruction::Br:
            ++f[ap::BranchCount];
            if (llvm::cast<llvm::BranchInst>(inst).isUnconditional()) {
              ++f[ap::UncondBranches];
            }
            break;
          case Instruction::Call: {
            const llvm::Function* callee =
                llvm::cast<llvm::CallInst>(inst).getCalledFunction();
            if (callee != nullptr && callee->getReturnType()->isIntegerTy()) {
              ++f[ap::returnInt];
            }
            break;
          }
          default:
            break;
        }
        if (llvm::isa<llvm::UnaryInstruction>(inst)) ++f[ap::testUnary];
        if (llvm::isa<llvm::BinaryOperator>(inst) &&
            (llvm::isa<llvm::Constant>(inst.getOperand(0)) ||
             llvm::isa<llvm::Constant>(inst.getOperand(1)))) {
          ++f[ap::binaryConstArg];
        }
      }

      f[ap::TotalInsts] += size;
      f[ap::ArgsPhi] += phi_args;
      if (phis == 0) {
        ++f[ap::BBNoPhi];
      } else if (phis <= 3) {
        ++f[ap::BB03Phi];
      } else {
        ++f[ap::BBHiPhi];
      }
      if (phi_args > 5) {
        ++f[ap::BBNumArgsHi];
      } else if (phi_args >= 1) {
        ++f[ap::BBNumArgsLo];
      }
      if (size < 15) {
        ++f[ap::BlockLow];
      } else if (size <= 500) {
        ++f[ap::BlockMid];
      }
    }
  }

  for (const OpcodeFeature& of : kAutophaseOpcodeFeatures) {
    f[of.index] = ops[of.opcode];
  }
  f[ap::TotalMemInst] = ops[Instruction::Alloca] + ops[Instruction::Load] +
                        ops[Instruction::Store] +
                        ops[Instruction::GetElementPtr] +
                        ops[Instruction::Call] + ops[Instruction::Invoke];
  return f;
}

std::array<int64_t, kInstCountDim> ComputeInstCount(
    const llvm::Module& module) {
  std::array<int64_t, kInstCountDim> counts{};
  OpcodeCounts ops{};
  for (const llvm::Function& fn : module) {
    if (fn.isDeclaration()) continue;
    ++counts[2];  // TotalFuncs
    for (const llvm::BasicBlock& bb : fn) {
      ++counts[1];  // TotalBlocks
      for (const Instruction& inst : bb) {
        if (ir::IsDebugIntrinsic(inst)) continue;
        const unsigned opcode = inst.getOpcode();
        if (opcode < ops.size()) ++ops[opcode];
        ++counts[0];  // TotalInsts
      }
    }
  }
  for (int opcode = 1; opcode <= kNumOpcodes; ++opcode) {
    counts[3 + opcode - 1] = ops[opcode];
  }
  return counts;
}

int64_t IrInstructionCount(const llvm::Module& module) {
  int64_t count = 0;
  for (const llvm::Function& fn : module) {
    count += ir::InstructionCountWithoutDebug(fn);  // 0 for declarations
  }
  return count;
}

}  // namespace phaseloop::observation
