#ifndef PHASELOOP_COMPILER_DRIVER_IR_FAITHFUL_CLONE_H_
#define PHASELOOP_COMPILER_DRIVER_IR_FAITHFUL_CLONE_H_

// A copy of a module that a pipeline turns into the same object as the
// module itself. llvm::CloneModule copies every name but not the counter
// each symbol table keeps for the names it makes unique: a global a pass
// creates under a name already taken ("str" for printf -> puts) became
// `.Lstr.1` in a clone where the module itself (and clang) gave `.Lstr.6`,
// so topk's kept object differed from what the same pipeline gives on an
// outcome-cache hit (review, 2026-11-30: 6 of 138 real units). Measurements
// whose objects are kept run on these copies.

#include <memory>

#include "llvm/IR/Module.h"

namespace phaseloop::ir {

// llvm::CloneModule(module), with its symbol tables' unique-name counters
// (the module's and each function's) set to the module's.
std::unique_ptr<llvm::Module> FaithfulClone(const llvm::Module& module);

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_FAITHFUL_CLONE_H_
