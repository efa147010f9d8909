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

// ModuleStateHash of the module as if its source_filename were only the
// file's name ("/home/ci/src/a.c" and "src/a.c" both hash as "a.c"): the
// directory a checkout sits in reaches the module through source_filename
// alone (the debug information and __FILE__ follow -ffile-prefix-map;
// source_filename does not), and LLVM's code generator reads only the file
// name from it (the object's STT_FILE symbol). Use-list order is included,
// as code generation may depend on it. For keys of choices made from object
// sizes (the outcome cache), so that checkouts at other paths share them.
// `module` is restored before this returns (it is changed meanwhile: not
// for a module another thread reads).
std::string ModuleStateHashIgnoringSourceDirectory(const llvm::Module& module);

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
