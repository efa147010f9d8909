#ifndef PHASELOOP_COMPILER_DRIVER_PASSES_PASS_RUNNER_H_
#define PHASELOOP_COMPILER_DRIVER_PASSES_PASS_RUNNER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/inline_site_advice.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Target/TargetMachine.h"

namespace phaseloop::passes {

// Whose settings tune the standard pipelines. clang-16 and opt-16 differ:
//  - vectorizers: clang turns the loop vectorizer on at O2/O3/Os and the SLP
//    vectorizer on at O2/O3/Os/Oz. opt's `-passes='default<Ox>'` goes through
//    PassBuilder's text parser, which forces both on at O2/O3/Os and off at
//    O1/Oz whatever the tuning says (so opt never runs SLP at Oz);
//  - unrolling: clang unrolls (and interleaves) above -O1 only, opt always;
//  - the target machine its IR passes see: clang's is the codegen one
//    (codegen::ObjectEmitter::target_machine(), PIC on Debian), opt's is
//    built from its empty codegen flags (ObjectEmitter::opt_target_machine(),
//    static relocation model). TTI answers differ between the two (address
//    modes with a global base), which changes LICM/inlining decisions.
// Sources use kClang, IR files kOpt, so each baseline reproduces the tool a
// user would compare with. TuningFor gives the tuning each tool ends up with.
enum class PipelineFlavor { kClang, kOpt };

llvm::PipelineTuningOptions TuningFor(ir::OptLevel level,
                                      PipelineFlavor flavor);

// The text of clang's standard pipeline at `level`: "default<Oz>".
std::string DefaultPipelineText(ir::OptLevel level);

// Coroutines must be lowered before codegen whatever a policy chose (the
// coro passes are not in the action space). True when a function is still
// marked presplitcoroutine, i.e. was not split by the pipeline that ran, or
// a coroutine intrinsic is still called (CoroCleanup did not run: the code
// generator cannot select them, and crashed).
bool HasUnloweredCoroutines(const llvm::Module& module);
// Whether some llvm.coro.* intrinsic is called in `module`. Run, like
// clang's pipelines, CoroEarly first on such a module when a pipeline does
// not begin with a standard element.
bool UsesCoroutineIntrinsics(const llvm::Module& module);
// Internal "verifier_failed: pipeline '<pipeline>' produced invalid IR: ..."
// when `module`, after `pipeline` ran on it, fails LLVM's verifier; OK
// otherwise. The wrapper's check before code generation, and topk's before
// it keeps an object for the wrapper to write.
absl::Status VerifyPipelineOutput(const llvm::Module& module,
                                  const std::string& pipeline);
// The pipeline that lowers them (PassBuilder text).
inline constexpr char kCoroutineLoweringPipeline[] =
    "coro-early,cgscc(coro-split),coro-cleanup,globaldce";

// What the standard elements (`default<Ox>`, `tuned<Ox;...>`) of a pipeline
// stand for: clang's whole pipeline, or its pre-link half when the compile
// writes bitcode for the linker's LTO (clang-16's BackendUtil: -flto builds
// buildLTOPreLinkDefaultPipeline, -flto=thin buildThinLTOPreLinkDefault-
// Pipeline; the rest of the optimisation runs at link time).
enum class StandardPipelines { kPerModule, kFullLtoPreLink, kThinLtoPreLink };

// Runs new-pass-manager pipelines on modules, in process. Every cached
// analysis is dropped after each Run, so no stale analysis survives between
// runs.
// The target machine (not owned, may be null) provides TTI for target-aware
// passes.
//
// Standard pipelines (`default<Ox>` elements at the top level of the text) are
// built from this runner's tuning, as clang builds its pipeline
// (PassBuilder::buildPerModuleDefaultPipeline): LLVM's text parser would
// overwrite the vectorizer settings (see PipelineFlavor). A top-level
// `tuned<Ox;...>` element (tuned_pipeline.h) is the same pipeline built from
// this tuning with its changes. Everything else, including acceptance of the
// text and its error messages, is PassBuilder's parser. Not thread-safe; the
// module must live in a context used by this thread only.
class PassRunner {
 public:
  PassRunner(llvm::TargetMachine* target_machine,
             llvm::PipelineTuningOptions tuning,
             StandardPipelines standard = StandardPipelines::kPerModule);
  ~PassRunner();
  PassRunner(const PassRunner&) = delete;
  PassRunner& operator=(const PassRunner&) = delete;

  // Parses and runs `pipeline` (PassBuilder text). A parse error is
  // InvalidArgument naming the text; the module is untouched then. With
  // always_inline_first, a pipeline without a standard element (default<>,
  // tuned<>), the empty one included, runs after LLVM's always-inliner.
  // With an
  // `inline_advice` (not owned), the standard pipelines' inliner asks it at
  // each call site (inline_site_advice.h); without, LLVM decides alone.
  absl::Status Run(llvm::Module& module, const std::string& pipeline,
                   InlineSiteAdvice* inline_advice = nullptr);

  // The wrapper's runners (and eval's, which measures as the wrapper does):
  // the standard pipelines honour always_inline themselves, and a policy's
  // pipeline without one would leave such calls (a C99 inline function then
  // fails to link), so it runs after LLVM's always-inliner (a module without
  // such functions is not changed by it). Off by default: search sessions
  // and candidate mining run the action space's pipelines as defined, so
  // stepping actions one by one and running them whole agree there.
  void set_always_inline_first(bool on) { always_inline_first_ = on; }
  bool always_inline_first() const { return always_inline_first_; }

  // Checks that `pipeline` parses, without running it.
  absl::Status Validate(const std::string& pipeline);

  // For an LTO runner (kFullLtoPreLink / kThinLtoPreLink), clang-16's steps
  // around its pre-link pipeline, so the bitcode is `clang -flto -c`'s byte
  // for byte. Before the pipeline: the module flags clang adds first (full:
  // "ThinLTO" 0 and "EnableSplitLTOUnit" 1; thin: "EnableSplitLTOUnit" 0;
  // the wrapper refuses -fsplit-lto-unit). After it: the bitcode with its
  // summary (full: BitcodeWriterPass with the summary; thin:
  // ThinLTOBitcodeWriterPass), no use-list order, as clang writes it.
  // FailedPrecondition on a kPerModule runner.
  absl::Status AddLtoModuleFlags(llvm::Module& module) const;
  absl::StatusOr<std::string> WriteLtoBitcode(llvm::Module& module);

 private:
  void ClearAnalyses();

  llvm::TargetMachine* target_machine_;
  llvm::PipelineTuningOptions tuning_;
  StandardPipelines standard_;
  bool always_inline_first_ = false;
  // Analysis managers are registered once (registration dominates the cost of
  // a single-pass run) and cleared after every run.
  llvm::LoopAnalysisManager lam_;
  llvm::FunctionAnalysisManager fam_;
  llvm::CGSCCAnalysisManager cgam_;
  llvm::ModuleAnalysisManager mam_;
  // LLVM's optnone handling, as clang's backend registers it (with its
  // other standard instrumentations): no pass but the required ones runs on
  // an `optnone` function (`__attribute__((optnone))`, `#pragma clang
  // optimize off`). Without it every pipeline optimised them, baseline's
  // too. Given to builder_, whose analysis registration hands it to every
  // pass manager a run makes.
  llvm::PassInstrumentationCallbacks instrumentation_;
  llvm::OptNoneInstrumentation optnone_{/*DebugLogging=*/false};
  std::unique_ptr<llvm::PassBuilder> builder_;
};

}  // namespace phaseloop::passes

#endif  // PHASELOOP_COMPILER_DRIVER_PASSES_PASS_RUNNER_H_
