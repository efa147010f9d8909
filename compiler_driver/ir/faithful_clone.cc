#include "compiler_driver/ir/faithful_clone.h"

#include <cstdint>

#include "llvm/IR/Function.h"
#include "llvm/IR/ValueSymbolTable.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::ir {
namespace {

// ValueSymbolTable::LastUnique is private and has no accessor. An explicit
// instantiation may name a private member (C++ [temp.explicit]); the friend
// it defines hands the member pointer out. LLVM 16's layout, checked by
// faithful_clone_test (a clone's new names equal the module's).
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

std::unique_ptr<llvm::Module> FaithfulClone(const llvm::Module& module) {
  std::unique_ptr<llvm::Module> clone = llvm::CloneModule(module);
  CopyCounter(module.getValueSymbolTable(), clone->getValueSymbolTable());
  for (const llvm::Function& function : module) {
    llvm::Function* copy = clone->getFunction(function.getName());
    if (copy == nullptr || function.getValueSymbolTable() == nullptr ||
        copy->getValueSymbolTable() == nullptr) {
      continue;
    }
    CopyCounter(*function.getValueSymbolTable(), *copy->getValueSymbolTable());
  }
  return clone;
}

}  // namespace phaseloop::ir
