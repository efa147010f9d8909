#include "compiler_driver/instrumentation/executed_count.h"

#include "llvm/ADT/Twine.h"
#include "llvm/IR/Comdat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace phaseloop::instrumentation {
namespace {

constexpr char kWrittenName[] = "__phaseloop_executed_written";
constexpr char kWriteName[] = "__phaseloop_executed_write";
constexpr char kLineFormat[] = "%d %lld\n";
constexpr int kLineBuffer = 48;  // a pid, a space, an i64, a newline, a NUL
// open(2) on Linux x86-64.
constexpr int kOpenFlags = 01 /*O_WRONLY*/ | 0100 /*O_CREAT*/ |
                           02000 /*O_APPEND*/ | 02000000 /*O_CLOEXEC*/;
constexpr int kOpenMode = 0644;
// Destructors of lower priority run later: 0 runs after the program's own
// (default 65535) and its C++ static destructors and atexit handlers.
constexpr int kDestructorPriority = 0;

// A symbol of the module's own (local linkage) named like a libc function
// the destructor calls would capture the call: rename it (local names are
// free to change).
void FreeLibcName(llvm::Module& module, llvm::StringRef name) {
  llvm::GlobalValue* value = module.getNamedValue(name);
  if (value != nullptr && value->hasLocalLinkage()) {
    value->setName(llvm::Twine(name) + ".local");
  }
}

llvm::GlobalVariable* HiddenComdatGlobal(llvm::Module& module,
                                         llvm::Comdat* comdat, llvm::Type* type,
                                         llvm::StringRef name) {
  auto* global = new llvm::GlobalVariable(
      module, type, /*isConstant=*/false, llvm::GlobalValue::LinkOnceODRLinkage,
      llvm::ConstantInt::get(type, 0), name);
  global->setVisibility(llvm::GlobalValue::HiddenVisibility);
  global->setComdat(comdat);
  global->setAlignment(llvm::Align(8));
  return global;
}

// void __phaseloop_executed_write(): once per process, when
// PHASELOOP_EXECUTED_OUT is set, appends "<pid> <count>\n" to it.
llvm::Function* MakeWriter(llvm::Module& module, llvm::Comdat* comdat,
                           llvm::GlobalVariable* counter,
                           llvm::GlobalVariable* written) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* i8 = llvm::Type::getInt8Ty(context);
  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  for (const char* name :
       {"getenv", "open", "getpid", "snprintf", "write", "close"}) {
    FreeLibcName(module, name);
  }
  llvm::FunctionCallee getenv = module.getOrInsertFunction(
      "getenv", llvm::FunctionType::get(ptr, {ptr}, false));
  llvm::FunctionCallee open = module.getOrInsertFunction(
      "open", llvm::FunctionType::get(i32, {ptr, i32}, true));
  llvm::FunctionCallee getpid =
      module.getOrInsertFunction("getpid", llvm::FunctionType::get(i32, false));
  llvm::FunctionCallee snprintf = module.getOrInsertFunction(
      "snprintf", llvm::FunctionType::get(i32, {ptr, i64, ptr}, true));
  llvm::FunctionCallee write = module.getOrInsertFunction(
      "write", llvm::FunctionType::get(i64, {i32, ptr, i64}, false));
  llvm::FunctionCallee close = module.getOrInsertFunction(
      "close", llvm::FunctionType::get(i32, {i32}, false));

  llvm::Function* writer = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
      llvm::GlobalValue::LinkOnceODRLinkage, kWriteName, module);
  writer->setVisibility(llvm::GlobalValue::HiddenVisibility);
  writer->setComdat(comdat);
  writer->addFnAttr(llvm::Attribute::NoUnwind);
  writer->addFnAttr(llvm::Attribute::NoInline);
  auto block = [&](const char* name) {
    return llvm::BasicBlock::Create(context, name, writer);
  };
  llvm::BasicBlock* entry = block("entry");
  llvm::BasicBlock* check_env = block("check_env");
  llvm::BasicBlock* open_file = block("open_file");
  llvm::BasicBlock* write_line = block("write_line");
  llvm::BasicBlock* done = block("done");

  llvm::IRBuilder<> b(entry);
  llvm::Value* line = b.CreateAlloca(llvm::ArrayType::get(i8, kLineBuffer));
  llvm::Value* was_written =
      b.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg, written, b.getInt8(1),
                        llvm::MaybeAlign(1), llvm::AtomicOrdering::Monotonic);
  b.CreateCondBr(b.CreateICmpEQ(was_written, b.getInt8(0)), check_env, done);

  b.SetInsertPoint(check_env);
  llvm::Value* path = b.CreateCall(
      getenv, {b.CreateGlobalStringPtr(kOutputEnv, "__phaseloop_env")});
  b.CreateCondBr(b.CreateIsNotNull(path), open_file, done);

  b.SetInsertPoint(open_file);
  llvm::Value* fd =
      b.CreateCall(open, {path, b.getInt32(kOpenFlags), b.getInt32(kOpenMode)});
  b.CreateCondBr(b.CreateICmpSGE(fd, b.getInt32(0)), write_line, done);

  b.SetInsertPoint(write_line);
  llvm::LoadInst* count = b.CreateAlignedLoad(i64, counter, llvm::Align(8));
  count->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::Value* length = b.CreateCall(
      snprintf, {line, b.getInt64(kLineBuffer),
                 b.CreateGlobalStringPtr(kLineFormat, "__phaseloop_line"),
                 b.CreateCall(getpid), count});
  llvm::Value* clamped = b.CreateSelect(b.CreateICmpSGT(length, b.getInt32(0)),
                                        length, b.getInt32(0));
  b.CreateCall(write, {fd, line, b.CreateZExt(clamped, i64)});
  b.CreateCall(close, {fd});
  b.CreateBr(done);

  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return writer;
}

}  // namespace

int64_t CountedInstructions(const llvm::BasicBlock& block) {
  int64_t count = 0;
  for (const llvm::Instruction& instruction : block) {
    if (llvm::isa<llvm::PHINode>(instruction) ||
        llvm::isa<llvm::DbgInfoIntrinsic>(instruction)) {
      continue;
    }
    ++count;
  }
  return count;
}

CountedModule CountExecutedInstructions(llvm::Module& module) {
  CountedModule counted;
  if (module.getNamedValue(kCounterName) != nullptr) return counted;  // done
  llvm::LLVMContext& context = module.getContext();
  llvm::Comdat* comdat = module.getOrInsertComdat(kCounterName);
  llvm::GlobalVariable* counter = HiddenComdatGlobal(
      module, comdat, llvm::Type::getInt64Ty(context), kCounterName);
  llvm::GlobalVariable* written = HiddenComdatGlobal(
      module, comdat, llvm::Type::getInt8Ty(context), kWrittenName);

  for (llvm::Function& function : module) {
    if (function.isDeclaration() || function.hasAvailableExternallyLinkage() ||
        function.hasFnAttribute(llvm::Attribute::Naked)) {
      continue;
    }
    for (llvm::BasicBlock& block : function) {
      const int64_t count = CountedInstructions(block);
      llvm::BasicBlock::iterator at = block.getFirstInsertionPt();
      if (at == block.end()) continue;  // a catchswitch (Windows EH only)
      llvm::IRBuilder<> b(&block, at);
      b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, b.getInt64(count),
                        llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
      ++counted.blocks;
      counted.instructions += count;
    }
  }
  llvm::Function* writer = MakeWriter(module, comdat, counter, written);
  llvm::appendToGlobalDtors(module, writer, kDestructorPriority, counter);
  return counted;
}

llvm::PreservedAnalyses ExecutedCountPass::run(llvm::Module& module,
                                               llvm::ModuleAnalysisManager&) {
  const bool already = module.getNamedValue(kCounterName) != nullptr;
  CountExecutedInstructions(module);
  return already ? llvm::PreservedAnalyses::all()
                 : llvm::PreservedAnalyses::none();
}

}  // namespace phaseloop::instrumentation
