#ifndef PHASELOOP_COMPILER_DRIVER_IR_MODULE_HASH_H_
#define PHASELOOP_COMPILER_DRIVER_IR_MODULE_HASH_H_

#include <string>

#include "llvm/IR/Module.h"

namespace phaseloop::ir {

// The module's bitcode (deterministic for a given module).
std::string ModuleBitcode(const llvm::Module& module);

// Content hash of a module: 32 hex digits of BLAKE3 over its bitcode. This is
// the `module_hash` every record joins on; equal modules hash equally across
// processes and machines.
std::string ModuleHash(const llvm::Module& module);

// Content hash of everything code generation reads from a module: 32 hex
// digits of BLAKE3 over its bitcode written with each value's use-list order
// (which ModuleHash's bitcode leaves out, and which passes and instruction
// selection may iterate in). Equal hashes: the same module, to the use list.
std::string ModuleStateHash(const llvm::Module& module);
// The bitcode ModuleStateHash hashes (use-list order included): parsed back,
// a copy of the module for another pipeline to continue from.
std::string ModuleStateBitcode(const llvm::Module& module);

// 32 hex digits of BLAKE3 over arbitrary bytes.
std::string ContentHash(std::string_view bytes);

// The module printed as textual IR.
std::string ModuleText(const llvm::Module& module);

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_MODULE_HASH_H_
