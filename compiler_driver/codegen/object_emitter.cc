#include "compiler_driver/codegen/object_emitter.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/CGPassBuilderOption.h"
#include "llvm/Transforms/Utils/Cloning.h"

extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeX86AsmParser();
}

namespace phaseloop::codegen {
namespace {

// x86-64 is the one target phaseloop generates code for (and the only one
// the statically linked wrapper carries); other triples get a clear error
// from ForModule.
void InitializeTargetsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
  });
}

}  // namespace

void InitializeTargets() { InitializeTargetsOnce(); }

namespace {

// clang passes -target-cpu/-target-feature to the backend and records the same
// strings on every function it emits; read them back from the first definition.
void CpuAndFeatures(const llvm::Module& module, std::string& cpu,
                    std::string& features) {
  for (const llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    if (f.hasFnAttribute("target-cpu")) {
      cpu = f.getFnAttribute("target-cpu").getValueAsString().str();
    }
    if (f.hasFnAttribute("target-features")) {
      features = f.getFnAttribute("target-features").getValueAsString().str();
    }
    return;
  }
}

bool HasFullDebugInfo(const llvm::Module& module) {
  for (const llvm::DICompileUnit* unit : module.debug_compile_units()) {
    if (unit->getEmissionKind() == llvm::DICompileUnit::FullDebug) return true;
  }
  return false;
}

llvm::CodeGenOpt::Level ToCodegenLevel(int level) {
  switch (level) {
    case 0:
      return llvm::CodeGenOpt::None;
    case 1:
      return llvm::CodeGenOpt::Less;
    case 3:
      return llvm::CodeGenOpt::Aggressive;
    default:
      return llvm::CodeGenOpt::Default;
  }
}

// opt-16's TargetMachine for `module` (opt.cpp: main and GetTargetMachine).
// opt reads every setting from LLVM's codegen command-line flags; nothing here
// parses a command line, so they keep their defaults, exactly as for an opt
// run without target flags. Registering the flags (once per process, as
// opt does statically) is what makes their getters usable.
std::unique_ptr<llvm::TargetMachine> OptToolTargetMachine(
    const llvm::Module& module) {
  static llvm::codegen::RegisterCodeGenFlags flags;
  (void)flags;
  llvm::Triple triple(module.getTargetTriple());
  // opt creates no target machine for a triple without an architecture (and
  // refuses a named but unknown one, which ForModule has rejected already).
  if (triple.getArch() == llvm::Triple::UnknownArch) return nullptr;
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(
      llvm::codegen::getMArch(), triple, error);
  if (target == nullptr) return nullptr;
  // -codegen-opt-level, opt's own flag for this, defaults to 0.
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple.getTriple(), llvm::codegen::getCPUStr(),
      llvm::codegen::getFeaturesStr(),
      llvm::codegen::InitTargetOptionsFromCodeGenFlags(triple),
      llvm::codegen::getExplicitRelocModel(),
      llvm::codegen::getExplicitCodeModel(), llvm::CodeGenOpt::None));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ObjectEmitter>> ObjectEmitter::ForModule(
    const llvm::Module& module, int codegen_level,
    const CodegenSettings& settings) {
  InitializeTargetsOnce();
  std::string triple_name = module.getTargetTriple();
  if (triple_name.empty()) triple_name = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target* target =
      llvm::TargetRegistry::lookupTarget(triple_name, error);
  if (target == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "module '", module.getModuleIdentifier(), "' targets '", triple_name,
        "'; phaseloop generates code for x86-64 only (", error, ")"));
  }
  std::string cpu = settings.target_cpu;
  std::string features = settings.target_features;
  if (cpu.empty()) CpuAndFeatures(module, cpu, features);

  // clang-16's defaults on Linux (clang/lib/CodeGen/BackendUtil.cpp).
  llvm::TargetOptions options;
  options.UseInitArray = true;
  options.RelaxELFRelocations = true;
  options.EmitAddrsig = settings.addrsig;
  options.FunctionSections = settings.function_sections;
  options.DataSections = settings.data_sections;
  options.UniqueSectionNames = settings.unique_section_names;
  options.EnableMachineFunctionSplitter = settings.split_machine_functions;
  options.DebuggerTuning = llvm::DebuggerKind::GDB;
  // clang (CompilerInvocation) turns call-site info on for x86-64 when it
  // optimises and emits more than line tables.
  options.EmitCallSiteInfo = codegen_level > 0 && HasFullDebugInfo(module);

  llvm::Reloc::Model reloc = module.getPICLevel() == llvm::PICLevel::NotPIC
                                 ? llvm::Reloc::Static
                                 : llvm::Reloc::PIC_;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple_name, cpu, features, options, reloc, module.getCodeModel(),
      ToCodegenLevel(codegen_level)));
  if (tm == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a target machine for ", triple_name));
  }
  return std::unique_ptr<ObjectEmitter>(
      new ObjectEmitter(std::move(tm), OptToolTargetMachine(module)));
}

namespace {

// LLVM 16 adds the MachineOutliner to a codegen pipeline on x86-64 only when
// its (process-wide) -enable-machine-outliner option says "always"; the
// target has no default outlining. The option is read while the pipeline is
// built, so it is set for that moment only, under this lock.
std::mutex& OutlinerOptionMutex() {
  static std::mutex mutex;
  return mutex;
}

llvm::cl::opt<llvm::RunOutliner>* MachineOutlinerOption() {
  llvm::cl::Option* option =
      llvm::cl::getRegisteredOptions().lookup("enable-machine-outliner");
  // Declared in LLVM's TargetPassConfig.cpp as cl::opt<RunOutliner>.
  return static_cast<llvm::cl::opt<llvm::RunOutliner>*>(option);
}

}  // namespace

absl::StatusOr<std::string> ObjectEmitter::EmitObject(
    std::unique_ptr<llvm::Module> module, const CodegenOptions& options) {
  if (options.no_jump_tables) {
    // The attribute clang's -fno-jump-tables sets, put on after the IR
    // pipeline ran, so only code generation reads it (codegen_options.h).
    for (llvm::Function& function : *module) {
      if (!function.isDeclaration()) {
        function.addFnAttr("no-jump-tables", "true");
      }
    }
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  llvm::Triple triple(module->getTargetTriple());
  passes.add(new llvm::TargetLibraryInfoWrapperPass(triple));
  bool failed = false;
  {
    std::lock_guard<std::mutex> lock(OutlinerOptionMutex());
    llvm::cl::opt<llvm::RunOutliner>* outliner = MachineOutlinerOption();
    if (options.machine_outliner && outliner == nullptr) {
      return absl::FailedPreconditionError(
          "this LLVM has no -enable-machine-outliner option; the "
          "machine-outliner codegen option cannot be applied");
    }
    if (options.machine_outliner) *outliner = llvm::RunOutliner::AlwaysOutline;
    // Read by TargetPassConfig while it adds the passes, as clang's
    // -fsplit-machine-functions sets it (BackendUtil.cpp).
    const bool split_before =
        target_machine_->Options.EnableMachineFunctionSplitter;
    target_machine_->Options.EnableMachineFunctionSplitter =
        split_before || options.split_functions;
    failed = target_machine_->addPassesToEmitFile(
        passes, os, nullptr, llvm::CGFT_ObjectFile, /*DisableVerify=*/true);
    target_machine_->Options.EnableMachineFunctionSplitter = split_before;
    if (options.machine_outliner) *outliner = llvm::RunOutliner::TargetDefault;
  }
  if (failed) return absl::InternalError("the target cannot emit object files");
  passes.run(*module);
  return std::string(buffer.data(), buffer.size());
}

absl::StatusOr<ObjectSizes> MeasureObjectSizes(const std::string& object) {
  llvm::MemoryBufferRef ref(object, "object");
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile(ref);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an object file: ", llvm::toString(file.takeError())));
  }
  if (!llvm::isa<llvm::object::ELFObjectFileBase>(file->get())) {
    return absl::InvalidArgumentError("not an ELF object file");
  }
  ObjectSizes sizes;
  for (const llvm::object::ELFSectionRef section : (*file)->sections()) {
    if (section.getFlags() & llvm::ELF::SHF_ALLOC) {
      sizes.alloc_size += section.getSize();
    }
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == ".text" || name->startswith(".text.")) {
      sizes.text_size += section.getSize();
    }
  }
  return sizes;
}

absl::StatusOr<int64_t> TextSectionBytes(const std::string& object) {
  absl::StatusOr<ObjectSizes> sizes = MeasureObjectSizes(object);
  if (!sizes.ok()) return sizes.status();
  return sizes->text_size;
}

absl::StatusOr<int64_t> AllocatedSectionBytes(const std::string& object) {
  absl::StatusOr<ObjectSizes> sizes = MeasureObjectSizes(object);
  if (!sizes.ok()) return sizes.status();
  return sizes->alloc_size;
}

absl::StatusOr<int64_t> TextSize(ObjectEmitter& emitter,
                                 const llvm::Module& module,
                                 const CodegenOptions& options) {
  absl::StatusOr<std::string> object =
      emitter.EmitObject(llvm::CloneModule(module), options);
  if (!object.ok()) return object.status();
  return TextSectionBytes(*object);
}

}  // namespace phaseloop::codegen
