#ifndef PHASELOOP_COMPILER_DRIVER_OBSERVATION_FEATURES_H_
#define PHASELOOP_COMPILER_DRIVER_OBSERVATION_FEATURES_H_

// Static feature vectors over an LLVM module, with the names, order and
// meanings of the Autophase paper (Haj-Ali et al., MLSys 2020) and of
// CompilerGym's `Autophase` / `InstCount` observation spaces (see
// /work/shared/reference/features.md). All counts are over the function
// bodies of the whole module; declarations contribute nothing.
//
// All functions are pure, single pass over the module, and allocate nothing.

#include <array>
#include <cstdint>
#include <string_view>

#include "llvm/IR/Module.h"

namespace phaseloop::observation {

inline constexpr int kAutophaseDim = 56;
inline constexpr int kInstCountDim = 70;

// Feature names, index-aligned with the vectors below.
const std::array<std::string_view, kAutophaseDim>& AutophaseNames();
// "TotalInsts", "TotalBlocks", "TotalFuncs", then one name per LLVM opcode in
// llvm/IR/Instruction.def order ("Ret", "Br", ..., "Freeze").
const std::array<std::string_view, kInstCountDim>& InstCountNames();

// The 56 Autophase features. Definitions (incl. the ambiguous ones) are
// documented in features.cc.
std::array<int64_t, kAutophaseDim> ComputeAutophase(const llvm::Module& module);

// TotalInsts, TotalBlocks, TotalFuncs, then the count of each LLVM opcode;
// entry 3 + (opcode - 1) counts `llvm::Instruction` opcode `opcode`.
std::array<int64_t, kInstCountDim> ComputeInstCount(const llvm::Module& module);

// LLVM IR instruction count over function bodies (a switch is one
// instruction). Equals ComputeInstCount(module)[0].
int64_t IrInstructionCount(const llvm::Module& module);

}  // namespace phaseloop::observation

#endif  // PHASELOOP_COMPILER_DRIVER_OBSERVATION_FEATURES_H_
