// The inliner's call-site advice, through PassRunner on small IR modules at
// -Oz: no advice (or one that agrees) changes nothing; a reversed answer
// inlines or keeps exactly that call; attributes and unviable callees are
// never overruled.
#include "compiler_driver/passes/inline_site_advice.h"

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/passes/pass_runner.h"
#include "gtest/gtest.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::passes {
namespace {

// @small is called once (-Oz inlines it: its body goes away); @big twice
// (too large for -Oz's threshold); @kept is noinline, @forced alwaysinline;
// @jumps calls a returns_twice function, so it cannot be inlined at all.
constexpr char kModule[] = R"(
declare i32 @setjmp(ptr) returns_twice
declare void @sink(i32)

define internal i32 @small(i32 %x) {
  %y = add i32 %x, 1
  ret i32 %y
}

define internal i32 @big(i32 %x) {
  %a = mul i32 %x, %x
  call void @sink(i32 %a)
  %b = xor i32 %a, 12345
  call void @sink(i32 %b)
  %c = sdiv i32 %b, 7
  call void @sink(i32 %c)
  %d = mul i32 %c, %a
  call void @sink(i32 %d)
  ret i32 %d
}

define internal i32 @kept(i32 %x) noinline {
  %y = add i32 %x, 2
  ret i32 %y
}

define internal i32 @forced(i32 %x) alwaysinline {
  %a = mul i32 %x, %x
  call void @sink(i32 %a)
  %b = xor i32 %a, 99
  call void @sink(i32 %b)
  ret i32 %b
}

define internal i32 @jumps(ptr %buf, i32 %x) {
  %r = call i32 @setjmp(ptr %buf)
  %s = add i32 %r, %x
  call void @sink(i32 %s)
  %t = mul i32 %s, %s
  call void @sink(i32 %t)
  ret i32 %t
}

define i32 @entry(i32 %v, ptr %buf) minsize optsize {
  %1 = call i32 @small(i32 %v)
  %2 = call i32 @big(i32 %1)
  %3 = call i32 @big(i32 %2)
  %4 = call i32 @kept(i32 %3)
  %5 = call i32 @forced(i32 %4)
  %6 = call i32 @jumps(ptr %buf, i32 %5)
  %7 = call i32 @jumps(ptr %buf, i32 %6)
  ret i32 %7
}
)";

class InlineSiteAdviceTest : public testing::Test {
 protected:
  InlineSiteAdviceTest()
      : runner_(nullptr, TuningFor(ir::OptLevel::kOz, PipelineFlavor::kClang)) {
  }

  // The module after -Oz with `advice` (none: LLVM alone).
  std::unique_ptr<llvm::Module> Optimised(InlineSiteAdvice* advice) {
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(kModule, error, context_);
    EXPECT_NE(module, nullptr) << error.getMessage().str();
    EXPECT_TRUE(runner_.Run(*module, "default<Oz>", advice).ok());
    return module;
  }

  static std::string Text(const llvm::Module& module) {
    std::string text;
    llvm::raw_string_ostream out(text);
    module.print(out, nullptr);
    return out.str();
  }

  // Calls from @entry to `callee` that remain.
  static int CallsTo(const llvm::Module& module, const std::string& callee) {
    int calls = 0;
    for (const llvm::BasicBlock& block : *module.getFunction("entry")) {
      for (const llvm::Instruction& instruction : block) {
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
        const llvm::Function* target =
            call == nullptr ? nullptr : call->getCalledFunction();
        if (target != nullptr && target->getName() == callee) ++calls;
      }
    }
    return calls;
  }

  // The index of the first site asked about `callee` in LLVM's own run.
  int FirstSiteOf(const std::string& callee) {
    FlipInlineSites record;
    Optimised(&record);
    for (const InlineSite& site : record.sites()) {
      if (site.callee == callee) return site.index;
    }
    ADD_FAILURE() << "no site of " << callee;
    return -1;
  }

  llvm::LLVMContext context_;
  PassRunner runner_;
};

TEST_F(InlineSiteAdviceTest, AnAdviceThatAgreesChangesNothing) {
  const std::string alone = Text(*Optimised(nullptr));
  FlipInlineSites record;
  EXPECT_EQ(Text(*Optimised(&record)), alone);
  EXPECT_EQ(CallsTo(*Optimised(nullptr), "big"), 2);
  EXPECT_EQ(CallsTo(*Optimised(nullptr), "small"), 0);
  ASSERT_FALSE(record.sites().empty());
  for (size_t i = 0; i < record.sites().size(); ++i) {
    EXPECT_EQ(record.sites()[i].index, static_cast<int>(i));
    EXPECT_EQ(record.answers()[i], record.sites()[i].default_inlines);
  }
}

TEST_F(InlineSiteAdviceTest, SitesAreDescribedTheSameWayEveryRun) {
  FlipInlineSites first, second;
  Optimised(&first);
  Optimised(&second);
  ASSERT_EQ(first.sites().size(), second.sites().size());
  for (size_t i = 0; i < first.sites().size(); ++i) {
    const InlineSite& a = first.sites()[i];
    const InlineSite& b = second.sites()[i];
    EXPECT_EQ(a.callee, b.callee);
    EXPECT_EQ(a.callee_instructions, b.callee_instructions);
    EXPECT_EQ(a.cost_estimate, b.cost_estimate);
    EXPECT_EQ(a.default_inlines, b.default_inlines);
  }
  const InlineSite& big = first.sites()[FirstSiteOf("big")];
  EXPECT_EQ(big.caller, "entry");
  EXPECT_TRUE(big.callee_local);
  EXPECT_EQ(big.callee_uses, 2);
  EXPECT_GE(big.callee_instructions, 9);
  EXPECT_FALSE(big.default_inlines);
  EXPECT_TRUE(big.may_inline);
  ASSERT_TRUE(big.cost_estimate.has_value());
}

TEST_F(InlineSiteAdviceTest, ReversingANoInlinesThatCall) {
  const int big = FirstSiteOf("big");
  FlipInlineSites flip({big});
  std::unique_ptr<llvm::Module> module = Optimised(&flip);
  EXPECT_FALSE(flip.sites()[big].default_inlines);
  EXPECT_TRUE(flip.answers()[big]);
  // The other call is then @big's last: LLVM's own cost model inlines it
  // (asked afterwards, answered as LLVM does), and the body goes.
  ASSERT_GT(flip.sites().size(), static_cast<size_t>(big + 1));
  const InlineSite& next = flip.sites()[big + 1];
  EXPECT_EQ(next.callee, "big");
  EXPECT_EQ(next.callee_uses, 1);
  EXPECT_TRUE(next.default_inlines);
  EXPECT_EQ(CallsTo(*module, "big"), 0);
  EXPECT_EQ(module->getFunction("big"), nullptr);
  EXPECT_EQ(CallsTo(*module, "jumps"), 2);
}

TEST_F(InlineSiteAdviceTest, ReversingAYesKeepsThatCall) {
  const int small = FirstSiteOf("small");
  FlipInlineSites flip({small});
  std::unique_ptr<llvm::Module> module = Optimised(&flip);
  EXPECT_TRUE(flip.sites()[small].default_inlines);
  EXPECT_FALSE(flip.answers()[small]);
  EXPECT_EQ(CallsTo(*module, "small"), 1);
}

TEST_F(InlineSiteAdviceTest, AttributesAndUnviableCalleesAreNotOverruled) {
  FlipInlineSites record;
  Optimised(&record);
  std::set<int> every;
  for (const InlineSite& site : record.sites()) {
    EXPECT_NE(site.callee, "kept");    // noinline: never asked
    EXPECT_NE(site.callee, "forced");  // alwaysinline: never asked
    if (site.callee == "jumps") EXPECT_FALSE(site.may_inline);
    every.insert(site.index);
  }
  FlipInlineSites flip_all(every);
  std::unique_ptr<llvm::Module> module = Optimised(&flip_all);
  EXPECT_EQ(CallsTo(*module, "kept"), 1);
  EXPECT_EQ(CallsTo(*module, "forced"), 0);
  EXPECT_EQ(CallsTo(*module, "jumps"), 2);
}

// Runs on their own context and runner, as the session's workers do.
std::string OptimisedText(InlineSiteAdvice* advice) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(kModule, error, context);
  if (module == nullptr) return "parse error";
  PassRunner runner(nullptr,
                    TuningFor(ir::OptLevel::kOz, PipelineFlavor::kClang));
  if (!runner.Run(*module, "default<Oz>", advice).ok()) return "run failed";
  std::string text;
  llvm::raw_string_ostream out(text);
  module->print(out, nullptr);
  return out.str();
}

TEST(InlineSiteAdviceThreadsTest, EachThreadRunsWithItsOwnAdvice) {
  FlipInlineSites record;
  OptimisedText(&record);
  ASSERT_FALSE(record.sites().empty());
  const std::set<int> first = {record.sites()[0].index};
  FlipInlineSites flip(first);
  const std::string flipped = OptimisedText(&flip);
  const std::string alone = OptimisedText(nullptr);
  ASSERT_NE(flipped, alone);
  constexpr int kRuns = 12;
  std::vector<std::string> with_advice(kRuns), without(kRuns);
  std::thread advised([&] {
    for (int i = 0; i < kRuns; ++i) {
      FlipInlineSites advice(first);
      with_advice[i] = OptimisedText(&advice);
    }
  });
  std::thread plain([&] {
    for (int i = 0; i < kRuns; ++i) without[i] = OptimisedText(nullptr);
  });
  advised.join();
  plain.join();
  for (int i = 0; i < kRuns; ++i) {
    EXPECT_EQ(with_advice[i], flipped) << "run " << i;
    EXPECT_EQ(without[i], alone) << "run " << i;
  }
}

}  // namespace
}  // namespace phaseloop::passes
