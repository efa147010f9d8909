#include "compiler_driver/passes/inline_site_advice.h"

#include <memory>
#include <utility>

#include "compiler_driver/ir/debug_intrinsics.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/InlineAdvisor.h"
#include "llvm/Analysis/InlineCost.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Module.h"

namespace phaseloop::passes {
namespace {

thread_local InlineSiteAdvice* current_advice = nullptr;
thread_local int next_site_index = 0;

// LLVM's default advisor, except where the advice in force reverses its
// answer at a site no attribute decides.
class SiteAdvisor : public llvm::InlineAdvisor {
 public:
  SiteAdvisor(llvm::Module& module, llvm::FunctionAnalysisManager& analyses,
              llvm::InlineParams params, llvm::InlineContext context,
              InlineSiteAdvice* advice)
      : llvm::InlineAdvisor(module, analyses, context),
        default_(module, analyses, params, context),
        advice_(advice) {}

 private:
  std::unique_ptr<llvm::InlineAdvice> getAdviceImpl(
      llvm::CallBase& call) override {
    // The default advisor's advice refers to it, a member: it outlives the
    // advice, which the inliner drops before asking again.
    std::unique_ptr<llvm::InlineAdvice> standard = default_.getAdvice(call);
    llvm::Function* callee = call.getCalledFunction();
    llvm::Function* caller = call.getCaller();
    if (standard == nullptr || callee == nullptr || callee->isDeclaration() ||
        callee == caller ||
        getMandatoryKind(call, FAM, getCallerORE(call)) !=
            MandatoryInliningKind::NotMandatory) {
      return standard;
    }
    InlineSite site = Describe(call, *caller, *callee);
    site.default_inlines = standard->isInliningRecommended();
    const bool answer = advice_->Decide(site);
    if (answer == site.default_inlines || (answer && !site.may_inline)) {
      return standard;
    }
    standard->recordUnattemptedInlining();
    return std::make_unique<llvm::InlineAdvice>(this, call, getCallerORE(call),
                                                answer);
  }

  InlineSite Describe(llvm::CallBase& call, llvm::Function& caller,
                      llvm::Function& callee) {
    InlineSite site;
    site.index = next_site_index++;
    site.caller = caller.getName().str();
    site.callee = callee.getName().str();
    site.callee_instructions = ir::InstructionCountWithoutDebug(callee);
    site.callee_blocks = static_cast<int64_t>(callee.size());
    site.callee_uses = static_cast<int64_t>(callee.getNumUses());
    site.callee_local = callee.hasLocalLinkage();
    site.caller_instructions = ir::InstructionCountWithoutDebug(caller);
    site.loop_depth =
        static_cast<int>(FAM.getResult<llvm::LoopAnalysis>(caller).getLoopDepth(
            call.getParent()));
    for (const llvm::Use& argument : call.args()) {
      if (llvm::isa<llvm::Constant>(argument.get())) ++site.constant_arguments;
    }
    llvm::TargetTransformInfo& tti =
        FAM.getResult<llvm::TargetIRAnalysis>(callee);
    auto tli = [&](llvm::Function& f) -> const llvm::TargetLibraryInfo& {
      return FAM.getResult<llvm::TargetLibraryAnalysis>(f);
    };
    auto assumptions = [&](llvm::Function& f) -> llvm::AssumptionCache& {
      return FAM.getResult<llvm::AssumptionAnalysis>(f);
    };
    // Attributes that forbid inlining (incompatible targets, sanitizers,
    // null-pointer semantics) answer here; what remains is cost, which
    // the advice may overrule where the body can be inlined at all.
    std::optional<llvm::InlineResult> by_attributes =
        llvm::getAttributeBasedInliningDecision(call, &callee, tti, tli);
    site.may_inline = (!by_attributes || by_attributes->isSuccess()) &&
                      llvm::isInlineViable(callee).isSuccess();
    site.cost_estimate = llvm::getInliningCostEstimate(call, tti, assumptions);
    return site;
  }

  llvm::DefaultInlineAdvisor default_;
  InlineSiteAdvice* advice_;
};

llvm::InlineAdvisor* MakeAdvisor(llvm::Module& module,
                                 llvm::FunctionAnalysisManager& analyses,
                                 llvm::InlineParams params,
                                 llvm::InlineContext context) {
  if (current_advice == nullptr) {
    // What InlineAdvisorAnalysis builds when no plugin is registered (the
    // default mode, no replay file).
    return new llvm::DefaultInlineAdvisor(module, analyses, params, context);
  }
  return new SiteAdvisor(module, analyses, params, context, current_advice);
}

}  // namespace

bool FlipInlineSites::Decide(const InlineSite& site) {
  const bool answer = flips_.count(site.index) > 0 ? !site.default_inlines
                                                   : site.default_inlines;
  sites_.push_back(site);
  answers_.push_back(answer && (site.default_inlines || site.may_inline));
  return answer;
}

void RegisterInlineSiteAdvisor(llvm::ModuleAnalysisManager& analyses) {
  // Constructed once (thread-safe static initialisation): the constructor
  // writes LLVM's process-wide HasBeenRegistered, which inliners on other
  // threads read; each analysis manager gets a copy, which writes nothing.
  static const llvm::PluginInlineAdvisorAnalysis* const plugin =
      new llvm::PluginInlineAdvisorAnalysis(&MakeAdvisor);
  analyses.registerPass([] { return *plugin; });
}

ScopedInlineSiteAdvice::ScopedInlineSiteAdvice(InlineSiteAdvice* advice)
    : previous_(current_advice), previous_index_(next_site_index) {
  current_advice = advice;
  next_site_index = 0;
}

ScopedInlineSiteAdvice::~ScopedInlineSiteAdvice() {
  current_advice = previous_;
  next_site_index = previous_index_;
}

}  // namespace phaseloop::passes
