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

// Which backend warnings clang shows for a unit, as its frontend's flags and
// pragmas decide (-w, -Wno-pass-failed, -Wno-frame-larger-than,
// -Wno-attribute-warning): in_process_frontend fills it in. A warning clang
// would not show, printed by LLVM, sent the whole compile to clang for
// nothing (a `#pragma clang loop vectorize(enable)` that failed, in a unit
// built with -w). By default, everything is shown (nothing is known).
struct ClangShownWarnings {
  bool pass_failed = true;        // "loop not vectorized" and the like
  bool frame_larger_than = true;  // a stack frame over -Wframe-larger-than
  bool attribute_warning = true;  // a call to a `warning` function
  // Optimisation remarks (the vectorizer's "loop not vectorized: ..."
  // analyses of a loop a pragma forces): clang shows them only under -R
  // flags, which the wrapper leaves to clang, or a diagnostic pragma.
  bool optimization_remarks = true;
  // Whether clang would show `info` (every error and note, and any warning
  // not named above: yes).
  bool Shows(const llvm::DiagnosticInfo& info) const;
};

class CollectedDiagnostics {
 public:
  // What becomes of warnings, notes and enabled remarks: collected with the
  // errors, or printed to stderr as LLVM prints them without a handler (the
  // wrapper leaves what LLVM prints to clang; only errors are taken).
  enum class Others { kCollect, kPrint };

  // Installs the handler on `context` for as long as this lives, then puts
  // back the one it found (not movable: the handler points at it).
  // `shown` (optional, outliving this): what clang would not show is
  // dropped, neither printed, collected nor counted. Without it, a
  // CollectedDiagnostics installed over another takes that one's.
  explicit CollectedDiagnostics(llvm::LLVMContext& context,
                                Others others = Others::kCollect,
                                const ClangShownWarnings* shown = nullptr);
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
  const ClangShownWarnings* shown_;
  std::string messages_;
  int errors_ = 0;
  int warnings_ = 0;
};

}  // namespace phaseloop::ir

#endif  // PHASELOOP_COMPILER_DRIVER_IR_COLLECTED_DIAGNOSTICS_H_
