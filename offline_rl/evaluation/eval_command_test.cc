// `phaseloop eval` refuses flags it would otherwise ignore without a word,
// before it reads the corpus.
#include "offline_rl/evaluation/eval_command.h"

#include <sstream>

#include "gtest/gtest.h"

namespace phaseloop::evaluation {
namespace {

EvalFlags Flags() {
  EvalFlags flags;
  flags.options.policy = "baseline";
  flags.options.corpus_dir = "/no/such/corpus";
  flags.options.mode = "single";
  return flags;
}

TEST(EvalCommandTest, FlagsThatWouldBeIgnoredAreRefused) {
  struct Case {
    EvalFlags flags;
    std::string said;
  };
  std::vector<Case> cases;
  cases.push_back({Flags(), "--max-modules"});
  cases.back().flags.options.max_modules = -5;
  cases.push_back({Flags(), "--k applies to --mode topk"});
  cases.back().flags.options.top_k = 3;
  cases.push_back({Flags(), "--budget and --budget-ms both given"});
  cases.back().flags.options.mode = "topk";
  cases.back().flags.budget_ms = 5;
  cases.back().flags.budget_given = true;
  for (const Case& c : cases) {
    std::ostringstream out, err;
    EXPECT_EQ(RunEval(c.flags, out, err), 2) << c.said;
    EXPECT_NE(err.str().find(c.said), std::string::npos) << err.str();
    EXPECT_EQ(out.str(), "");
  }
  // The deprecated alias alone is read, and said.
  EvalFlags alias = Flags();
  alias.options.mode = "topk";
  alias.budget_ms = 5;
  std::ostringstream out, err;
  EXPECT_EQ(RunEval(alias, out, err), 2);  // the corpus does not exist
  EXPECT_NE(err.str().find("--budget-ms is deprecated"), std::string::npos)
      << err.str();
}

}  // namespace
}  // namespace phaseloop::evaluation
