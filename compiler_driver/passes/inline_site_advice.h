#ifndef PHASELOOP_COMPILER_DRIVER_PASSES_INLINE_SITE_ADVICE_H_
#define PHASELOOP_COMPILER_DRIVER_PASSES_INLINE_SITE_ADVICE_H_

// Per-call-site inlining decisions inside the in-process pipeline (issue 20:
// decisions beyond pass order). LLVM's standard pipelines inline through
// ModuleInlinerWrapperPass, which asks an InlineAdvisor at every call site;
// PassRunner registers LLVM 16's PluginInlineAdvisorAnalysis so that advisor
// can be ours. With no InlineSiteAdvice given to a run, the advisor is LLVM's
// DefaultInlineAdvisor, exactly what LLVM builds without a plugin (objects
// are unchanged; the wrapper's byte-for-byte tests hold it).
//
// With an advice, every call site the inliner considers and no attribute
// decides (not always_inline, not noinline, the callee defined here, the
// attributes of caller and callee compatible) is described as an InlineSite
// and the advice answers inline or not. LLVM's own answer is in the site.
// The advice can only choose among inlinings LLVM allows: inlining is forced
// only where it is viable (isInlineViable) and the attributes allow it, as a
// user's always_inline would; so no advice can change what a program means.
//
// Registration is process-wide in LLVM 16 (PluginInlineAdvisorAnalysis::
// HasBeenRegistered): once any PassRunner exists, every module analysis
// manager that runs an inliner must register the plugin; PassRunner is the
// only one in phaseloop. The advice in force is per thread (the factory LLVM
// calls is a plain function pointer), set for the duration of one Run.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llvm/IR/PassManager.h"

namespace phaseloop::passes {

// One call site the inliner asks about, as it stands at that moment.
struct InlineSite {
  int index = 0;  // order of the question within one Run, from 0
  std::string caller;
  std::string callee;
  int64_t callee_instructions = 0;
  int64_t callee_blocks = 0;
  int64_t callee_uses = 0;    // calls and other uses of the callee
  bool callee_local = false;  // internal linkage: no calls left, no body
  int64_t caller_instructions = 0;
  int loop_depth = 0;          // of the call in its caller
  int constant_arguments = 0;  // arguments that are constants
  // LLVM's inline cost ignoring thresholds (InlineCost.h); nullopt where it
  // cannot tell.
  std::optional<int> cost_estimate;
  bool default_inlines = false;  // LLVM's own advisor's answer
  bool may_inline = false;       // inlining it would be allowed
};

class InlineSiteAdvice {
 public:
  virtual ~InlineSiteAdvice() = default;
  // True: inline the call. Answering true where !site.may_inline leaves
  // LLVM's answer in force.
  virtual bool Decide(const InlineSite& site) = 0;
};

// LLVM's answer everywhere except at the sites whose index is in `flips`,
// where it is reversed (when allowed); every site asked is kept, with the
// answer given. What a search over single decisions measures with.
class FlipInlineSites : public InlineSiteAdvice {
 public:
  explicit FlipInlineSites(std::set<int> flips = {})
      : flips_(std::move(flips)) {}
  bool Decide(const InlineSite& site) override;
  const std::vector<InlineSite>& sites() const { return sites_; }
  const std::vector<bool>& answers() const { return answers_; }

 private:
  std::set<int> flips_;
  std::vector<InlineSite> sites_;
  std::vector<bool> answers_;
};

// Registers the plugin analysis in `analyses` (PassRunner's constructor).
void RegisterInlineSiteAdvisor(llvm::ModuleAnalysisManager& analyses);

// Sets the calling thread's advice for its lifetime (nullptr: LLVM's
// default advisor), restoring the previous one after.
class ScopedInlineSiteAdvice {
 public:
  explicit ScopedInlineSiteAdvice(InlineSiteAdvice* advice);
  ~ScopedInlineSiteAdvice();
  ScopedInlineSiteAdvice(const ScopedInlineSiteAdvice&) = delete;
  ScopedInlineSiteAdvice& operator=(const ScopedInlineSiteAdvice&) = delete;

 private:
  InlineSiteAdvice* previous_;
  int previous_index_;
};

}  // namespace phaseloop::passes

#endif  // PHASELOOP_COMPILER_DRIVER_PASSES_INLINE_SITE_ADVICE_H_
