#include "compiler_driver/ir/module_hash.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::ir {

std::string ModuleBitcode(const llvm::Module& module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os);
  os.flush();
  return bytes;
}

std::string ContentHash(std::string_view bytes) {
  llvm::BLAKE3 hasher;
  hasher.update(llvm::StringRef(bytes.data(), bytes.size()));
  auto digest = hasher.final<16>();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string ModuleHash(const llvm::Module& module) {
  return ContentHash(ModuleBitcode(module));
}

std::string ModuleStateHashIgnoringSourceDirectory(const llvm::Module& module) {
  const std::string source = module.getSourceFileName();
  const std::string name = llvm::sys::path::filename(source).str();
  if (name == source) return ModuleStateHash(module);
  llvm::Module& changed = const_cast<llvm::Module&>(module);
  changed.setSourceFileName(name);
  std::string hash = ModuleStateHash(changed);
  changed.setSourceFileName(source);
  return hash;
}

std::string ModuleStateBitcode(const llvm::Module& module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os, /*ShouldPreserveUseListOrder=*/true);
  os.flush();
  return bytes;
}

std::string ModuleStateHash(const llvm::Module& module) {
  return ContentHash(ModuleStateBitcode(module));
}

std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  return text;
}

}  // namespace phaseloop::ir
