#include "compiler_driver/passes/pass_runner.h"

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler_driver/passes/pass_extensions.h"
#include "compiler_driver/passes/tuned_pipeline.h"
#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Bitcode/BitcodeWriterPass.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Coroutines/CoroEarly.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/IPO/ThinLTOBitcodeWriter.h"

namespace phaseloop::passes {
namespace {

using ir::OptLevel;

// "default<Oz>" -> Oz; anything else (other passes, the LTO pipeline aliases)
// -> nullopt. Spelled exactly as PassBuilder's parser accepts it.
std::optional<OptLevel> StandardPipelineLevel(std::string_view element) {
  constexpr std::string_view kPrefix = "default<";
  if (element.size() <= kPrefix.size() ||
      element.substr(0, kPrefix.size()) != kPrefix || element.back() != '>') {
    return std::nullopt;
  }
  std::string_view level =
      element.substr(kPrefix.size(), element.size() - kPrefix.size() - 1);
  if (level.empty() || level.front() == '-') return std::nullopt;
  return ir::ParseOptLevel(level);
}

// A standard pipeline element: default<Ox>, or tuned<Ox;...> (tuned_pipeline.h)
// with the tuning it changes.
struct StandardElement {
  OptLevel level;
  std::optional<TunedPipeline> tuned;
};

// nullopt: not a standard element; an error: a tuned<...> element whose
// parameters are wrong.
std::optional<absl::StatusOr<StandardElement>> ParseStandardElement(
    std::string_view element) {
  if (std::optional<OptLevel> level = StandardPipelineLevel(element)) {
    return StandardElement{*level, std::nullopt};
  }
  std::optional<absl::StatusOr<TunedPipeline>> tuned =
      ParseTunedElement(absl::string_view(element.data(), element.size()));
  if (!tuned) return std::nullopt;
  if (!tuned->ok()) return tuned->status();
  std::optional<OptLevel> level = ir::ParseOptLevel((*tuned)->level);
  if (!level) {  // ParseTunedParams accepts only O1..Oz
    return absl::InternalError(absl::StrCat("tuned level ", (*tuned)->level));
  }
  return StandardElement{*level, **tuned};
}

llvm::PipelineTuningOptions ApplyTuning(llvm::PipelineTuningOptions tuning,
                                        const TunedPipeline& tuned) {
  if (tuned.inline_threshold) tuning.InlinerThreshold = *tuned.inline_threshold;
  if (tuned.unroll) tuning.LoopUnrolling = *tuned.unroll;
  if (tuned.interleave) tuning.LoopInterleaving = *tuned.interleave;
  if (tuned.vectorize) tuning.LoopVectorization = *tuned.vectorize;
  if (tuned.slp) tuning.SLPVectorization = *tuned.slp;
  if (tuned.merge_functions) tuning.MergeFunctions = *tuned.merge_functions;
  return tuning;
}

// The top-level elements of pipeline text: "a,function(b,c),default<O2>" ->
// {"a", "function(b,c)", "default<O2>"}. Like PassBuilder's tokenizer, only
// parentheses nest.
std::vector<std::string_view> TopLevelElements(std::string_view text) {
  std::vector<std::string_view> elements;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    } else if (text[i] == ',' && depth == 0) {
      elements.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  elements.push_back(text.substr(start));
  return elements;
}

absl::Status ParseError(const std::string& pipeline, llvm::Error error) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid pass pipeline '", pipeline,
                   "': ", llvm::toString(std::move(error))));
}

// `pipeline` with every top-level tuned<LEVEL;...> element checked and
// written as default<LEVEL>: the text LLVM's parser judges (it does not know
// phaseloop's element; a tuned<...> nested in an adaptor stays, so the parser
// refuses it as an unknown pass).
absl::StatusOr<std::string> UntunedText(const std::string& pipeline) {
  std::string text;
  for (std::string_view element : TopLevelElements(pipeline)) {
    if (!text.empty()) text += ',';
    std::optional<absl::StatusOr<TunedPipeline>> tuned =
        ParseTunedElement(absl::string_view(element.data(), element.size()));
    if (!tuned) {
      text.append(element);
      continue;
    }
    if (!tuned->ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid pass pipeline '", pipeline,
                       "': ", tuned->status().message()));
    }
    absl::StrAppend(&text, "default<", (*tuned)->level, ">");
  }
  return text;
}

// Parses `pipeline` with PassBuilder's text parser into a throwaway manager:
// what it accepts, and its messages, are what Run and Validate accept.
absl::Status CheckParses(llvm::TargetMachine* target_machine,
                         const llvm::PipelineTuningOptions& tuning,
                         const std::string& pipeline) {
  absl::StatusOr<std::string> untuned = UntunedText(pipeline);
  if (!untuned.ok()) return untuned.status();
  llvm::PassBuilder builder(target_machine, tuning);
  AddPassExtensions(builder);
  llvm::ModulePassManager mpm;
  if (llvm::Error error = builder.parsePassPipeline(mpm, *untuned)) {
    return ParseError(pipeline, std::move(error));
  }
  return absl::OkStatus();
}

// LLVM 16's CGProfilePass, near the end of every standard -O1..-Oz
// pipeline, adds the "CG Profile" module flag (a module with profile data,
// -fprofile-instr-use, gets one) without looking for one already there, so
// a second standard pipeline in one text (`default<O3>,default<O3>`, an -O1
// prefix) added a second and the verifier rejected the duplicate key.
// Before each standard pipeline after the first, the flag the previous one
// left is dropped: the last one's describes the final call graph, as a
// single pipeline's does. Metadata only: every analysis stays valid.
struct DropCallGraphProfileFlag
    : llvm::PassInfoMixin<DropCallGraphProfileFlag> {
  llvm::PreservedAnalyses run(llvm::Module& module,
                              llvm::ModuleAnalysisManager&) {
    llvm::NamedMDNode* flags = module.getModuleFlagsMetadata();
    if (flags == nullptr) return llvm::PreservedAnalyses::all();
    std::vector<llvm::MDNode*> kept;
    for (llvm::MDNode* flag : flags->operands()) {
      const auto* key =
          flag->getNumOperands() >= 2
              ? llvm::dyn_cast<llvm::MDString>(flag->getOperand(1))
              : nullptr;
      if (key == nullptr || key->getString() != "CG Profile") {
        kept.push_back(flag);
      }
    }
    if (kept.size() == flags->getNumOperands()) {
      return llvm::PreservedAnalyses::all();
    }
    flags->clearOperands();
    for (llvm::MDNode* flag : kept) flags->addOperand(flag);
    return llvm::PreservedAnalyses::all();
  }
};

}  // namespace

llvm::PipelineTuningOptions TuningFor(OptLevel level, PipelineFlavor flavor) {
  llvm::PipelineTuningOptions tuning;  // opt-16's defaults
  if (flavor == PipelineFlavor::kOpt) {
    // opt-16 -passes='default<Ox>': its driver keeps these defaults
    // (LoopUnrolling = !-disable-loop-unrolling), then the pipeline parser
    // (PassBuilder::parseModulePass) sets both vectorizers to
    // "speedup level > 1 and not Oz" before building the pipeline.
    bool vectorize = level == OptLevel::kO2 || level == OptLevel::kO3 ||
                     level == OptLevel::kOs;
    tuning.LoopVectorization = vectorize;
    tuning.SLPVectorization = vectorize;
    return tuning;
  }
  // clang-16 (BackendUtil.cpp) builds the pipeline with buildPerModuleDefault-
  // Pipeline from its CodeGenOptions: -funroll-loops defaults on above -O1
  // (Os/Oz count as -O2); interleaving follows unrolling; the loop vectorizer
  // is on at O2/O3/Os and the SLP vectorizer at O2/O3/Os/Oz (the driver's
  // rules); no -fmerge-functions.
  bool unroll = level == OptLevel::kO2 || level == OptLevel::kO3 ||
                level == OptLevel::kOs || level == OptLevel::kOz;
  tuning.LoopUnrolling = unroll;
  tuning.LoopInterleaving = unroll;
  tuning.LoopVectorization = level == OptLevel::kO2 || level == OptLevel::kO3 ||
                             level == OptLevel::kOs;
  tuning.SLPVectorization = unroll;
  tuning.MergeFunctions = false;
  return tuning;
}

std::string DefaultPipelineText(OptLevel level) {
  return absl::StrCat("default<", ir::OptLevelName(level), ">");
}

PassRunner::PassRunner(llvm::TargetMachine* target_machine,
                       llvm::PipelineTuningOptions tuning,
                       StandardPipelines standard)
    : target_machine_(target_machine),
      tuning_(tuning),
      standard_(standard),
      builder_(std::make_unique<llvm::PassBuilder>(
          target_machine, tuning, std::nullopt, &instrumentation_)) {
  optnone_.registerCallbacks(instrumentation_);
  AddPassExtensions(*builder_);  // test-only passes, when a test links them
  // Registered once; Run clears every cached result afterwards, so nothing
  // computed on one module (or one state of it) is seen by the next run.
  fam_.registerPass([&] { return builder_->buildDefaultAAPipeline(); });
  builder_->registerModuleAnalyses(mam_);
  RegisterInlineSiteAdvisor(mam_);
  builder_->registerCGSCCAnalyses(cgam_);
  builder_->registerFunctionAnalyses(fam_);
  builder_->registerLoopAnalyses(lam_);
  builder_->crossRegisterProxies(lam_, fam_, cgam_, mam_);
}

PassRunner::~PassRunner() { ClearAnalyses(); }

void PassRunner::ClearAnalyses() {
  mam_.clear();
  cgam_.clear();
  fam_.clear();
  lam_.clear();
}

absl::Status PassRunner::Validate(const std::string& pipeline) {
  return CheckParses(target_machine_, tuning_, pipeline);
}

absl::Status PassRunner::Run(llvm::Module& module, const std::string& pipeline,
                             InlineSiteAdvice* inline_advice) {
  llvm::PassBuilder& builder = *builder_;

  llvm::ModulePassManager mpm;
  std::optional<llvm::PassBuilder> standard;
  // Tuned standard pipelines' builders, one per element; like `standard`,
  // they outlive the run.
  std::vector<std::unique_ptr<llvm::PassBuilder>> tuned_builders;
  const std::vector<std::string_view> elements = TopLevelElements(pipeline);
  bool has_standard = false;
  for (std::string_view element : elements) {
    if (ParseStandardElement(element)) has_standard = true;
  }
  // Coroutines: clang's pipelines run CoroEarly before anything else (then
  // CoroSplit inside the inliner's CGSCC pipeline, CoroCleanup at the end).
  // A pipeline that begins otherwise ran the module inliner's CoroSplit
  // (`scc-oz-module-inliner`) on coroutines CoroEarly had not prepared: they
  // came out unsplit and unmarked, their intrinsics in place — the code
  // generator crashed, and lowered afterwards the program crashed when it
  // ran. A module without coroutine intrinsics is not changed, nor is a
  // pipeline beginning with a standard element (which runs CoroEarly
  // itself).
  if (!elements.empty() && !ParseStandardElement(elements.front()) &&
      UsesCoroutineIntrinsics(module)) {
    mpm.addPass(llvm::CoroEarlyPass());
  }
  if (!has_standard) {
    // always_inline is a promise the standard pipelines keep (clang's -O0
    // pipeline runs this pass; the others inline mandatory calls first): a
    // pipeline without one would leave such calls in place, which breaks
    // the link of a C99 `inline` function and drops _FORTIFY_SOURCE's
    // checks. A module without always_inline functions is not changed.
    if (always_inline_first_) {
      mpm.addPass(llvm::AlwaysInlinerPass(/*InsertLifetimeIntrinsics=*/true));
      if (pipeline.empty()) {
        mpm.run(module, mam_);
        ClearAnalyses();
        return absl::OkStatus();
      }
    }
    if (llvm::Error error = builder.parsePassPipeline(mpm, pipeline)) {
      return ParseError(pipeline, std::move(error));
    }
  } else {
    // The whole text parses, so it is a module pipeline (default<> is a
    // module pass): its top-level elements run in order, each as the parser
    // would make it. Runs of other elements are parsed inside module(...),
    // which parses them exactly as at the top level.
    absl::Status parses = CheckParses(target_machine_, tuning_, pipeline);
    if (!parses.ok()) return parses;
    // Standard pipelines come from a builder of their own, which no parsing
    // touches: an LTO alias parsed earlier in the text rewrites its builder's
    // vectorizer tuning. It outlives the run, like `builder`.
    standard.emplace(target_machine_, tuning_);
    std::string others;
    int standard_elements_added = 0;
    auto flush_others = [&]() -> absl::Status {
      if (others.empty()) return absl::OkStatus();
      llvm::Error error =
          builder.parsePassPipeline(mpm, "module(" + others + ")");
      others.clear();
      if (error) return ParseError(pipeline, std::move(error));
      return absl::OkStatus();
    };
    for (std::string_view element : elements) {
      std::optional<absl::StatusOr<StandardElement>> parsed =
          ParseStandardElement(element);
      if (!parsed) {
        if (!others.empty()) others += ',';
        others.append(element);
        continue;
      }
      if (!parsed->ok()) return parsed->status();  // CheckParses caught it
      absl::Status flushed = flush_others();
      if (!flushed.ok()) return flushed;
      const StandardElement& standard_element = **parsed;
      llvm::PassBuilder* element_builder = &*standard;
      if (standard_element.tuned) {
        tuned_builders.push_back(std::make_unique<llvm::PassBuilder>(
            target_machine_, ApplyTuning(tuning_, *standard_element.tuned)));
        element_builder = tuned_builders.back().get();
      }
      if (standard_elements_added++ > 0) {
        mpm.addPass(DropCallGraphProfileFlag());
      }
      if (standard_element.level == OptLevel::kO0) {
        mpm.addPass(element_builder->buildO0DefaultPipeline(
            llvm::OptimizationLevel::O0));
      } else {
        const llvm::OptimizationLevel level =
            ir::ToLlvm(standard_element.level);
        switch (standard_) {
          case StandardPipelines::kPerModule:
            mpm.addPass(element_builder->buildPerModuleDefaultPipeline(level));
            break;
          case StandardPipelines::kFullLtoPreLink:
            mpm.addPass(element_builder->buildLTOPreLinkDefaultPipeline(level));
            break;
          case StandardPipelines::kThinLtoPreLink:
            mpm.addPass(
                element_builder->buildThinLTOPreLinkDefaultPipeline(level));
            break;
        }
      }
    }
    absl::Status flushed = flush_others();
    if (!flushed.ok()) return flushed;
  }
  {
    ScopedInlineSiteAdvice advice(inline_advice);
    mpm.run(module, mam_);
  }
  ClearAnalyses();
  return absl::OkStatus();
}

absl::Status PassRunner::AddLtoModuleFlags(llvm::Module& module) const {
  // As clang-16's EmitAssemblyHelper::RunOptimizationPipeline, which adds
  // them when it builds the pipeline, before running it.
  auto add = [&](const char* key, uint32_t value) {
    if (module.getModuleFlag(key) == nullptr) {
      module.addModuleFlag(llvm::Module::Error, key, value);
    }
  };
  switch (standard_) {
    case StandardPipelines::kPerModule:
      return absl::FailedPreconditionError("not an LTO pass runner");
    case StandardPipelines::kFullLtoPreLink:
      add("ThinLTO", 0);
      add("EnableSplitLTOUnit", 1);
      break;
    case StandardPipelines::kThinLtoPreLink:
      add("EnableSplitLTOUnit", 0);
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PassRunner::WriteLtoBitcode(llvm::Module& module) {
  if (standard_ == StandardPipelines::kPerModule) {
    return absl::FailedPreconditionError("not an LTO pass runner");
  }
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  llvm::ModulePassManager mpm;
  if (standard_ == StandardPipelines::kThinLtoPreLink) {
    mpm.addPass(llvm::ThinLTOBitcodeWriterPass(out, /*ThinLinkOS=*/nullptr));
  } else {
    mpm.addPass(llvm::BitcodeWriterPass(out, /*ShouldPreserveUseListOrder=*/
                                        false, /*EmitSummaryIndex=*/true));
  }
  mpm.run(module, mam_);
  ClearAnalyses();
  out.flush();
  return bytes;
}

bool UsesCoroutineIntrinsics(const llvm::Module& module) {
  for (const llvm::Function& f : module) {
    if (f.isIntrinsic() && f.getName().startswith("llvm.coro.") &&
        !f.use_empty()) {
      return true;
    }
  }
  return false;
}

bool HasUnloweredCoroutines(const llvm::Module& module) {
  for (const llvm::Function& f : module) {
    if (f.isPresplitCoroutine()) return true;
  }
  return UsesCoroutineIntrinsics(module);
}

absl::Status VerifyPipelineOutput(const llvm::Module& module,
                                  const std::string& pipeline) {
  std::string message;
  llvm::raw_string_ostream out(message);
  if (!llvm::verifyModule(module, &out)) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("verifier_failed: pipeline '", pipeline,
                   "' produced invalid IR: ", out.str().substr(0, 300)));
}

}  // namespace phaseloop::passes
