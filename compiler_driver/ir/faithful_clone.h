#ifndef PHASELOOP_COMPILER_DRIVER_IR_FAITHFUL_CLONE_H_
#define PHASELOOP_COMPILER_DRIVER_IR_FAITHFUL_CLONE_H_

// Copies of a module that a pipeline turns into the same object as the
// module itself (topk measures candidates on them and keeps the winner's
// object). llvm::CloneModule is not such a copy:
//  - it does not keep each value's use-list order, which passes and
//    instruction selection iterate in: default<Oz> on a clone gave another
//    object than on the module for 9 of 150 real C files (review,
//    2026-11-30);
//  - it does not copy the counter each symbol table keeps for the names it
//    makes unique: a global a pass creates under a taken name ("str" for
//    printf -> puts) became `.Lstr.1` where the module and clang give
//    `.Lstr.6` (6 of 138 real units).
// A copy is therefore read back from the module's bitcode written with
// use-list order, and its symbol tables' counters are set to the module's.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace phaseloop::ir {

class FaithfulCopier {
 public:
  // Writes `module`'s bitcode once; `module` must outlive the copier.
  explicit FaithfulCopier(const llvm::Module& module);

  // A new copy in `context` (the module's own or another: a context code
  // generation never ran in, for -flto, whose output lists its metadata
  // kinds).
  absl::StatusOr<std::unique_ptr<llvm::Module>> Copy(
      llvm::LLVMContext& context) const;

 private:
  const llvm::Module& module_;
  std::string bitcode_;
};

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_FAITHFUL_CLONE_H_
