// End-to-end: what a policy's pipeline leaves undone, the wrapper still
// does, as clang's pipelines do: always_inline calls inlined, coroutines
// lowered, whatever the policy runs.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/phaseloop_cc_fixture.h"

namespace phaseloop {
namespace {

// A C++20 generator: coroutines the pipeline must split before the code
// generator sees them.
constexpr char kCoroutineProgram[] = R"(
#include <coroutine>
#include <cstdio>
struct Gen {
  struct promise_type {
    int value = 0;
    Gen get_return_object() { return Gen{Handle::from_promise(*this)}; }
    std::suspend_always initial_suspend() { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(int v) { value = v; return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
  using Handle = std::coroutine_handle<promise_type>;
  Handle h;
  ~Gen() { h.destroy(); }
};
Gen Count(int n) { for (int i = 1; i <= n; ++i) co_yield i; }
int main() {
  Gen g = Count(4);
  int sum = 0;
  for (g.h.resume(); !g.h.done(); g.h.resume()) sum += g.h.promise().value;
  std::printf("%d\n", sum);
  return sum == 10 ? 0 : 1;
}
)";

// The shipped default in topk mode measuring every candidate it holds.
std::string EveryCandidateOfTheDefault() {
  return "--phaseloop-policy=artifact:" +
         cc_wrapper::testing::AbsolutePath(
             "configs/policies/default.plpolicy") +
         "?mode=topk&k=200&budget=100000000";
}

TEST_F(PhaseloopCcTest, AlwaysInlineIsHonouredWhateverThePolicyRuns) {
  // A C99 inline function has no external definition: clang's pipelines
  // inline it (always_inline), and a policy pipeline without a standard
  // element left the call, an undefined reference at link time.
  std::ofstream(dir_ + "/ai.c")
      << "#include <stdio.h>\n"
         "inline __attribute__((always_inline)) int twice(int x) "
         "{ return 2 * x; }\n"
         "int main(int argc, char **argv) "
         "{ printf(\"%d\\n\", twice(argc + 20)); return 0; }\n";
  // An IR pipeline of passes without an inliner, and none at all (only a
  // code generator option).
  for (const std::string pipeline :
       {"instcombine", "codegen<machine-outliner>"}) {
    std::string log;
    ASSERT_EQ(Run({cc_, "-std=c99", "-O2", "-c", "ai.c",
                   "--phaseloop-policy=fixed:" + pipeline},
                  {}, &log),
              0)
        << log;
    ASSERT_EQ(Run({"clang-16", "ai.o", "-o", "ai"}, {}, &log), 0)
        << pipeline << ": " << log;
    ASSERT_EQ(Run({dir_ + "/ai"}, {}, &log), 0);
    EXPECT_EQ(log, "42\n");
    std::vector<v1::Decision> decisions = Decisions();
    ASSERT_FALSE(decisions.empty());
    EXPECT_EQ(decisions.back().outcome(), v1::OPTIMIZED)
        << decisions.back().detail();
    EXPECT_EQ(decisions.back().pipeline(), pipeline);
  }
}

TEST_F(PhaseloopCcTest, CoroutinesAreLoweredWhateverThePolicyRuns) {
  // A policy pipeline without the coroutine passes must still give a
  // working program: the optimizer lowers what the policy left unsplit.
  std::ofstream(dir_ + "/coro.cc") << kCoroutineProgram;
  std::string log;
  ASSERT_EQ(Run({cxx_, "-std=c++20", "-O2", "-c", "coro.cc",
                 "--phaseloop-policy=fixed:function(sroa,instcombine)"},
                {}, &log),
            0)
      << log;
  ASSERT_EQ(Run({cxx_, "coro.o", "-o", "coro"}), 0);
  ASSERT_EQ(Run({dir_ + "/coro"}, {}, &log), 0);
  EXPECT_EQ(log, "10\n");
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].outcome(), v1::OPTIMIZED) << decisions[0].detail();
}

TEST_F(PhaseloopCcTest, TopKMeasuresCandidatesThatLeaveCoroutinesUnsplit) {
  // A third of the shipped default's candidates (those starting with the
  // module inliner, without -Oz) leave the coroutines unsplit; topk emitted
  // them as they were and the code generator crashed (a heap corruption),
  // so every coroutine unit fell back to clang. They are measured lowered,
  // as the wrapper lowers before it emits. k covers every candidate.
  std::ofstream(dir_ + "/coro.cc") << kCoroutineProgram;
  const std::string policy = EveryCandidateOfTheDefault();
  std::string log;
  ASSERT_EQ(Run({cxx_, "-std=c++20", "-Oz", "-c", "coro.cc", policy},
                {{"PHASELOOP_OUTCOME_CACHE", "off"}}, &log),
            0)
      << log;
  EXPECT_EQ(log, "");
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 1u);
  const v1::Decision& d = decisions[0];
  EXPECT_EQ(d.outcome(), v1::OPTIMIZED) << d.reason() << ": " << d.detail();
  int unsplit_candidates = 0;
  for (const v1::MeasuredPipeline& m : d.topk_measured()) {
    if (m.pipeline().rfind("scc-oz-module-inliner", 0) == 0) {
      ++unsplit_candidates;
    }
  }
  EXPECT_GT(unsplit_candidates, 0) << d.detail();
  EXPECT_EQ(d.detail().find("failed:"), std::string::npos) << d.detail();
  ASSERT_EQ(Run({cxx_, "coro.o", "-o", "coro"}), 0);
  ASSERT_EQ(Run({dir_ + "/coro"}, {}, &log), 0);
  EXPECT_EQ(log, "10\n");
}

TEST_F(PhaseloopCcTest, ThePipelineThatSplitsCoroutinesGetsThemPrepared) {
  // The module inliner's pipeline splits coroutines: clang's pipelines run
  // CoroEarly before it, and without it the coroutine came out unsplit with
  // its intrinsics in place (the code generator crashed; lowered later, the
  // program crashed). -Oz's pipeline still gives clang's object.
  std::ofstream(dir_ + "/coro.cc") << kCoroutineProgram;
  for (const std::string pipeline :
       {"scc-oz-module-inliner", "scc-oz-module-inliner,constmerge",
        "function(sroa),scc-oz-module-inliner", "default<Oz>"}) {
    std::string log;
    ASSERT_EQ(Run({cxx_, "-std=c++20", "-Oz", "-c", "coro.cc",
                   "--phaseloop-policy=fixed:" + pipeline},
                  {}, &log),
              0)
        << log;
    const v1::Decision d = Decisions().back();
    EXPECT_EQ(d.outcome(), v1::OPTIMIZED)
        << pipeline << ": " << d.reason() << ": " << d.detail();
    ASSERT_EQ(Run({cxx_, "coro.o", "-o", "coro"}), 0);
    ASSERT_EQ(Run({dir_ + "/coro"}, {}, &log), 0) << pipeline;
    EXPECT_EQ(log, "10\n") << pipeline;
  }
  const std::string ours = Read("coro.o");
  ASSERT_EQ(Run({"clang++-16", "-std=c++20", "-Oz", "-c", "coro.cc", "-o",
                 "clang.o"}),
            0);
  EXPECT_EQ(ours, Read("clang.o"));
}

// topk measuring every candidate of the shipped default, the outcome
// cache off.
class TopKEveryCandidateTest : public PhaseloopCcTest {
 protected:
  // Compiles `source` at -Oz; its exit status, what it printed in `log`.
  int CompileAtOz(const std::string& source, std::string* log) {
    return Run({cc_, "-Oz", "-c", source, EveryCandidateOfTheDefault()},
               {{"PHASELOOP_OUTCOME_CACHE", "off"}}, log);
  }

  // `source` compiled at -Oz must succeed silently and be optimised with at
  // least one candidate listed under `failed:`; returns its decision.
  v1::Decision CompileWithAFailedCandidate(const std::string& source) {
    std::string log;
    EXPECT_EQ(CompileAtOz(source, &log), 0) << log;
    EXPECT_EQ(log, "");
    std::vector<v1::Decision> decisions = Decisions();
    EXPECT_EQ(decisions.size(), 1u);
    if (decisions.empty()) return v1::Decision();
    const v1::Decision& d = decisions[0];
    EXPECT_EQ(d.outcome(), v1::OPTIMIZED) << d.reason() << ": " << d.detail();
    EXPECT_NE(d.detail().find("failed:"), std::string::npos) << d.detail();
    return d;
  }
};

// A call to an `error` function that -Oz folds away (the kernel's
// BUILD_BUG_ON pattern) stays in under a candidate that does not inline:
// LLVM reported it in that measurement's context, had no handler there and
// exited, and the compile fell back to clang as optimizer_crashed. Such a
// candidate fails alone; the rest are measured.
TEST_F(TopKEveryCandidateTest, DropsACandidateThatLeavesAnErrorCallIn) {
  std::ofstream(dir_ + "/folded.c")
      << "__attribute__((error(\"folded away at -Oz\"))) void fail(void);\n"
         "static inline int check(int x) { if (x > 10) fail(); return x; }\n"
         "int table[64];\n"
         "int f(int i) { return check(3) + table[i & 63]; }\n"
         "int main(void) { return f(1) - 3; }\n";
  const v1::Decision d = CompileWithAFailedCandidate("folded.c");
  EXPECT_GT(d.topk_measured_size(), 1) << d.detail();
  ASSERT_EQ(Run({cc_, "folded.o", "-o", "folded"}), 0);
  EXPECT_EQ(Run({dir_ + "/folded"}), 0);

  // Left in by -Oz too: the program's error, clang's message, as before.
  std::ofstream(dir_ + "/kept.c")
      << "__attribute__((error(\"never call bad\"))) void bad(void);\n"
         "void use(void) { bad(); }\n";
  std::string log;
  EXPECT_NE(CompileAtOz("kept.c", &log), 0);
  EXPECT_NE(log.find("error: call to 'bad' declared with 'error' attribute: "
                     "never call bad"),
            std::string::npos)
      << log;
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 3u);  // the link's, then this one's
  EXPECT_EQ(decisions[2].reason(), "backend_failed") << decisions[2].detail();
}

// The same with a `warning` function: a candidate that keeps the call made
// LLVM print a warning clang (with -Oz's pipeline) never gives, and the
// whole compile fell back to clang (backend_diagnostics). Such a candidate
// is left out; one -Oz keeps too still reaches clang.
TEST_F(TopKEveryCandidateTest, DropsACandidateThatLeavesAWarningCallIn) {
  std::ofstream(dir_ + "/warned.c")
      << "__attribute__((warning(\"folded away at -Oz\"))) void odd(void);\n"
         "static inline int check(int x) { if (x > 10) odd(); return x; }\n"
         "int table[64];\n"
         "int f(int i) { return check(3) + table[i & 63]; }\n";
  CompileWithAFailedCandidate("warned.c");

  std::ofstream(dir_ + "/kept.c")
      << "__attribute__((warning(\"still called\"))) void odd(void);\n"
         "void use(void) { odd(); }\n";
  std::string log;
  ASSERT_EQ(CompileAtOz("kept.c", &log), 0) << log;
  EXPECT_NE(log.find("warning: call to 'odd' declared with 'warning' "
                     "attribute: still called"),
            std::string::npos)
      << log;
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[1].outcome(), v1::FAIL_OPEN) << decisions[1].detail();
}

}  // namespace
}  // namespace phaseloop
