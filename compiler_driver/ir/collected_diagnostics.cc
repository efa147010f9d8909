#include "compiler_driver/ir/collected_diagnostics.h"

#include "absl/strings/str_cat.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::ir {

bool ClangShownWarnings::Shows(const llvm::DiagnosticInfo& info) const {
  if (info.getSeverity() == llvm::DS_Remark) {
    return optimization_remarks ||
           !llvm::isa<llvm::DiagnosticInfoOptimizationBase>(&info);
  }
  if (info.getSeverity() != llvm::DS_Warning) return true;
  switch (info.getKind()) {
    case llvm::DK_OptimizationFailure:
      return pass_failed;
    case llvm::DK_StackSize:
      return frame_larger_than;
    case llvm::DK_DontCall:
      return attribute_warning;
    default:
      return true;
  }
}

CollectedDiagnostics::CollectedDiagnostics(llvm::LLVMContext& context,
                                           Others others,
                                           const ClangShownWarnings* shown)
    : context_(context),
      others_(others),
      previous_(context.getDiagnosticHandlerCallBack()),
      previous_context_(context.getDiagnosticContext()),
      shown_(shown) {
  if (shown_ == nullptr && previous_ == &CollectedDiagnostics::Handle) {
    shown_ =
        static_cast<const CollectedDiagnostics*>(previous_context_)->shown_;
  }
  context_.setDiagnosticHandlerCallBack(&CollectedDiagnostics::Handle, this);
}

CollectedDiagnostics::~CollectedDiagnostics() {
  context_.setDiagnosticHandlerCallBack(previous_, previous_context_);
}

void CollectedDiagnostics::Handle(const llvm::DiagnosticInfo& info,
                                  void* self) {
  auto* me = static_cast<CollectedDiagnostics*>(self);
  if (me->shown_ != nullptr && !me->shown_->Shows(info)) return;
  if (info.getSeverity() == llvm::DS_Warning) ++me->warnings_;
  if (info.getSeverity() == llvm::DS_Error) {
    ++me->errors_;
  } else if (me->others_ == Others::kPrint) {
    // What LLVMContext::diagnose does without a handler: remarks only when
    // enabled (and verbose ones only with hotness), then a prefix.
    if (const auto* remark =
            llvm::dyn_cast<llvm::DiagnosticInfoOptimizationBase>(&info)) {
      if (!remark->isEnabled() ||
          (remark->isVerbose() && !remark->getHotness()))
        return;
    }
    llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
    llvm::errs() << llvm::LLVMContext::getDiagnosticMessagePrefix(
                        info.getSeverity())
                 << ": ";
    info.print(printer);
    llvm::errs() << "\n";
    return;
  }
  llvm::raw_string_ostream os(me->messages_);
  llvm::DiagnosticPrinterRawOStream printer(os);
  info.print(printer);
  os << "; ";
}

absl::Status CollectedDiagnostics::ErrorsAsStatus(
    const std::string& what) const {
  if (errors_ == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(what, ": LLVM reported ", errors_,
                   " error(s): ", messages_.substr(0, 500)));
}

}  // namespace phaseloop::ir
