#include "compiler_driver/ir/faithful_clone.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/ValueSymbolTable.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::ir {
namespace {

// ValueSymbolTable::LastUnique is private and has no accessor. An explicit
// instantiation may name a private member (C++ [temp.explicit]); the friend
// it defines hands the member pointer out. LLVM 16's layout, checked by
// faithful_clone_test (a copy's new names equal the module's).
struct LastUniqueTag {
  using type = uint32_t llvm::ValueSymbolTable::*;
  friend type MemberOf(LastUniqueTag);
};

template <typename Tag, typename Tag::type Member>
struct ExposeMember {
  friend typename Tag::type MemberOf(Tag) { return Member; }
};

template struct ExposeMember<LastUniqueTag,
                             &llvm::ValueSymbolTable::LastUnique>;

void CopyCounter(const llvm::ValueSymbolTable& from,
                 llvm::ValueSymbolTable& to) {
  const auto member = MemberOf(LastUniqueTag());
  to.*member = from.*member;
}

}  // namespace

FaithfulCopier::FaithfulCopier(const llvm::Module& module) : module_(module) {
  llvm::raw_string_ostream os(bitcode_);
  llvm::WriteBitcodeToFile(module, os, /*ShouldPreserveUseListOrder=*/true);
  os.flush();
}

absl::StatusOr<std::unique_ptr<llvm::Module>> FaithfulCopier::Copy(
    llvm::LLVMContext& context) const {
  llvm::Expected<std::unique_ptr<llvm::Module>> read = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode_, module_.getModuleIdentifier()), context);
  if (!read) {
    return absl::InternalError(absl::StrCat("cannot read the module back: ",
                                            llvm::toString(read.takeError())));
  }
  std::unique_ptr<llvm::Module> copy = std::move(*read);
  CopyCounter(module_.getValueSymbolTable(), copy->getValueSymbolTable());
  for (const llvm::Function& function : module_) {
    if (!function.hasName()) continue;
    llvm::Function* same = copy->getFunction(function.getName());
    if (same == nullptr || function.getValueSymbolTable() == nullptr ||
        same->getValueSymbolTable() == nullptr) {
      continue;
    }
    CopyCounter(*function.getValueSymbolTable(), *same->getValueSymbolTable());
  }
  return copy;
}

}  // namespace phaseloop::ir
