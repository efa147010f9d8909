// `phaseloop eval` refuses flags it would otherwise ignore without a word,
// before it reads the corpus.
#include "offline_rl/evaluation/eval_command.h"

#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "offline_rl/evaluation/policy_evaluation.h"

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

// A report where every module failed measured nothing: its figures are
// null, not 0.0 read as ratios (and no best fixed pipeline is named).
TEST(EvalCommandTest, AReportOfFailuresOnlyHasNoFigures) {
  EvalReport report;
  ModuleEval failed;
  failed.name = "m1";
  failed.error = "frontend failed";
  report.modules = {failed};
  report.aggregates.failed = 1;
  report.best_fixed = "default<Oz>";
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(report));
  EXPECT_TRUE(j["aggregates"]["alloc_oz_ratio"].is_null()) << j;
  EXPECT_TRUE(j["aggregates"]["text_oz_ratio"].is_null()) << j;
  EXPECT_EQ(j["aggregates"]["failed"], 1);
  EXPECT_TRUE(j["best_fixed"].is_null()) << j;
  EXPECT_TRUE(j["policy_vs_best_fixed"].is_null()) << j;
}

}  // namespace
}  // namespace phaseloop::evaluation
