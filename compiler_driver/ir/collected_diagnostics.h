#ifndef PHASELOOP_COMPILER_DRIVER_IR_COLLECTED_DIAGNOSTICS_H_
#define PHASELOOP_COMPILER_DRIVER_IR_COLLECTED_DIAGNOSTICS_H_

// An LLVMContext whose diagnostics are collected instead of printed. With
// no handler, LLVM prints a diagnostic and, for an error (an inline asm
// label defined twice once inlined, a linker clash), calls exit(1): one bad
// module ended a whole search worker, every time its job came back.

#include <string>

#include "absl/status/status.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/LLVMContext.h"

namespace phaseloop::ir {

class CollectedDiagnostics {
 public:
  // What becomes of warnings, notes and enabled remarks: collected with the
  // errors, or printed to stderr as LLVM prints them without a handler (the
  // wrapper leaves what LLVM prints to clang; only errors are taken).
  enum class Others { kCollect, kPrint };

  // Installs the handler on `context` for as long as this lives, then puts
  // back the one it found (not movable: the handler points at it).
  explicit CollectedDiagnostics(llvm::LLVMContext& context,
                                Others others = Others::kCollect);
  ~CollectedDiagnostics();
  CollectedDiagnostics(const CollectedDiagnostics&) = delete;
  CollectedDiagnostics& operator=(const CollectedDiagnostics&) = delete;

  // Every diagnostic collected so far, "; "-separated.
  const std::string& messages() const { return messages_; }
  int errors() const { return errors_; }
  int warnings() const { return warnings_; }  // printed or collected
  void Clear() {
    messages_.clear();
    errors_ = 0;
    warnings_ = 0;
  }
  // OK, or FailedPrecondition naming `what` and the errors reported.
  absl::Status ErrorsAsStatus(const std::string& what) const;

 private:
  static void Handle(const llvm::DiagnosticInfo& info, void* self);
  llvm::LLVMContext& context_;
  const Others others_;
  llvm::DiagnosticHandler::DiagnosticHandlerTy previous_;
  void* previous_context_;
  std::string messages_;
  int errors_ = 0;
  int warnings_ = 0;
};

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_COLLECTED_DIAGNOSTICS_H_
