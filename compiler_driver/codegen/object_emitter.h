#ifndef PHASELOOP_COMPILER_DRIVER_CODEGEN_OBJECT_EMITTER_H_
#define PHASELOOP_COMPILER_DRIVER_CODEGEN_OBJECT_EMITTER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace phaseloop::codegen {

// In-process code generation with the settings clang-16 would use for the
// module: its triple, the target-cpu/target-features of its functions, the
// relocation model from its PIC level, its code model, and clang's target
// options (init-array, relaxed ELF relocations, address-significance table).
// With the same settings llc on clang's optimised IR reproduces clang's object,
// so `.text` measured here is the `.text` of `clang -c`.
//
// Not thread-safe: one emitter per thread.
class ObjectEmitter {
 public:
  // `codegen_level` is 0..3 (ir::CodegenLevel of the user's -O level).
  static absl::StatusOr<std::unique_ptr<ObjectEmitter>> ForModule(
      const llvm::Module& module, int codegen_level);

  // The target machine, for target-aware IR passes (TTI).
  llvm::TargetMachine& target_machine() { return *target_machine_; }

  // Emits an ELF object. Codegen rewrites IR, so the module is consumed:
  // pass a clone to keep the original.
  absl::StatusOr<std::string> EmitObject(std::unique_ptr<llvm::Module> module);

 private:
  explicit ObjectEmitter(std::unique_ptr<llvm::TargetMachine> tm)
      : target_machine_(std::move(tm)) {}
  std::unique_ptr<llvm::TargetMachine> target_machine_;
};

// Bytes in the object's text sections (`.text` and `.text.*`, e.g. C++ inline
// functions in COMDAT groups) — the `text_size` metric.
absl::StatusOr<int64_t> TextSectionBytes(const std::string& object);

// Clone + emit + measure: the `text_size` of a module without touching it.
absl::StatusOr<int64_t> TextSize(ObjectEmitter& emitter,
                                 const llvm::Module& module);

}  // namespace phaseloop::codegen

#endif  // PHASELOOP_COMPILER_DRIVER_CODEGEN_OBJECT_EMITTER_H_
