#ifndef PHASELOOP_COMPILER_DRIVER_CODEGEN_OBJECT_EMITTER_H_
#define PHASELOOP_COMPILER_DRIVER_CODEGEN_OBJECT_EMITTER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler_driver/codegen/codegen_options.h"
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
// Backend settings clang takes from its command line rather than from the
// module; the defaults are clang-16's on x86-64 Linux.
struct CodegenSettings {
  bool function_sections = false;    // -ffunction-sections
  bool data_sections = false;        // -fdata-sections
  bool unique_section_names = true;  // -fno-unique-section-names
  bool addrsig = true;               // -fno-addrsig
  // -fsplit-machine-functions: cold blocks (by the profile) to
  // .text.split. sections; without profile data it splits nothing.
  bool split_machine_functions = false;
  // clang's -target-cpu and -target-feature (its cc1 job's, comma-joined),
  // which it gives the code generator; empty: read from the first defined
  // function's attributes (a module made elsewhere). They differ where a
  // function says otherwise (target("arch=...")) or the module has no
  // function (module-level asm is assembled for the command line's CPU).
  std::string target_cpu;
  std::string target_features;
};

// Not thread-safe: one emitter per thread.
class ObjectEmitter {
 public:
  // `codegen_level` is 0..3 (ir::CodegenLevel of the user's -O level).
  static absl::StatusOr<std::unique_ptr<ObjectEmitter>> ForModule(
      const llvm::Module& module, int codegen_level,
      const CodegenSettings& settings = CodegenSettings());

  // The target machine, for target-aware IR passes (TTI) as clang runs them:
  // clang gives its optimisation pipeline the codegen target machine.
  llvm::TargetMachine& target_machine() { return *target_machine_; }

  // The target machine opt-16 gives its IR passes for this module when run
  // without target flags (-mtriple, -march, -mcpu, -mattr, -relocation-model,
  // -code-model, ...), as opt.cpp builds it: the module's triple, an empty CPU
  // and feature string (each function's target-cpu/target-features still pick
  // its subtarget), TargetOptions from LLVM's codegen flags at their defaults,
  // the target's default relocation model (static on x86-64 ELF, where clang
  // compiles PIC) and code model, and CodeGenOpt::None (opt's
  // -codegen-opt-level default). Null when opt builds none: the module's
  // triple names no architecture. For IR passes only; EmitObject always uses
  // target_machine().
  llvm::TargetMachine* opt_target_machine() {
    return opt_target_machine_.get();
  }

  // Emits an ELF object. Codegen rewrites IR, so the module is consumed:
  // pass a clone to keep the original. `options` are the policy's code
  // generator options (codegen_options.h); with none set the object is
  // clang's. The machine outliner is switched by LLVM's process-wide
  // -enable-machine-outliner option, which is set and restored under a
  // process-wide lock while the codegen pipeline is built (the pipeline
  // then runs unlocked); a process must not fork while another of its
  // threads emits.
  absl::StatusOr<std::string> EmitObject(std::unique_ptr<llvm::Module> module,
                                         const CodegenOptions& options = {});

 private:
  ObjectEmitter(std::unique_ptr<llvm::TargetMachine> tm,
                std::unique_ptr<llvm::TargetMachine> opt_tm)
      : target_machine_(std::move(tm)),
        opt_target_machine_(std::move(opt_tm)) {}
  std::unique_ptr<llvm::TargetMachine> target_machine_;
  std::unique_ptr<llvm::TargetMachine> opt_target_machine_;  // may be null
};

// Registers the x86-64 target (once; thread-safe). ForModule does it too;
// code that needs the target before, e.g. to write bitcode with its symbol
// table, calls this.
void InitializeTargets();

// Both size metrics of one ELF object, read in one pass over its sections.
struct ObjectSizes {
  int64_t text_size = 0;   // `.text` and `.text.*`
  int64_t alloc_size = 0;  // every SHF_ALLOC section
};
absl::StatusOr<ObjectSizes> MeasureObjectSizes(const std::string& object);

// Bytes in the object's text sections (`.text` and `.text.*`, e.g. C++ inline
// functions in COMDAT groups) — the `text_size` metric.
absl::StatusOr<int64_t> TextSectionBytes(const std::string& object);

// Bytes of every section the object loads into memory (`SHF_ALLOC`:
// `.text*`, `.rodata*`, `.data*`, `.bss*`, `.eh_frame`, ...) — the
// `alloc_size` metric, the truth for code size: a pipeline that trims
// `.text` by 19 bytes and adds 18 kB of tables to `.rodata` is larger.
absl::StatusOr<int64_t> AllocatedSectionBytes(const std::string& object);

// Clone + emit + measure: the `text_size` of a module without touching it.
absl::StatusOr<int64_t> TextSize(ObjectEmitter& emitter,
                                 const llvm::Module& module,
                                 const CodegenOptions& options = {});

}  // namespace phaseloop::codegen

#endif  // PHASELOOP_COMPILER_DRIVER_CODEGEN_OBJECT_EMITTER_H_
