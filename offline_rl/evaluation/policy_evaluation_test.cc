#include "offline_rl/evaluation/policy_evaluation.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/policy_runtime/policy_artifact.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "offline_rl/evaluation/eval_command.h"
#include "staging_harness/corpus/fixture_corpus.h"

namespace phaseloop::evaluation {
namespace {

namespace fs = std::filesystem;

// A real corpus (`phaseloop corpus build` code path) of four fixture
// programs, built once for the whole test.
class PolicyEvaluationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    const fs::path base = fs::path(tmp != nullptr ? tmp : "/tmp") / "eval";
    auto built = corpus::BuildFixtureCorpus(
        base.string(), {"sorting", "bits", "strings", "recursion"});
    ASSERT_TRUE(built.ok()) << built.status();
    corpus_ = new std::string((base / "corpus").string());
  }
  static std::string* corpus_;

  EvalOptions Options(const std::string& policy) {
    EvalOptions options;
    options.policy = policy;
    options.corpus_dir = *corpus_;
    options.threads = 2;
    return options;
  }
};
std::string* PolicyEvaluationTest::corpus_ = nullptr;

TEST_F(PolicyEvaluationTest, BaselineIsExactlyOz) {
  auto report = EvaluatePolicy(Options("baseline"));
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->modules.size(), 4u);
  for (const ModuleEval& m : report->modules) {
    EXPECT_TRUE(m.error.empty()) << m.error;
    EXPECT_EQ(m.pipeline, "default<Oz>");
    EXPECT_EQ(m.text_size, m.text_size_oz) << m.name;
    EXPECT_EQ(m.alloc_size, m.alloc_size_oz) << m.name;
    EXPECT_GT(m.alloc_size, m.text_size) << m.name;  // .rodata, .eh_frame...
    EXPECT_EQ(m.ir_count, m.ir_count_oz) << m.name;
    EXPECT_GT(m.ir_count_o0, m.ir_count_oz) << m.name;
    EXPECT_GT(m.text_size_o0, 0);
  }
  const EvalAggregates& a = report->aggregates;
  EXPECT_EQ(a.modules, 4);
  EXPECT_DOUBLE_EQ(a.text_oz_ratio, 1.0);
  EXPECT_DOUBLE_EQ(a.alloc_oz_ratio, 1.0);
  EXPECT_DOUBLE_EQ(a.geomean_oz_ratio, 1.0);
  EXPECT_DOUBLE_EQ(a.over_oz, 0.0);
  EXPECT_DOUBLE_EQ(a.gym_score, 1.0);
  EXPECT_EQ(a.text_larger_than_oz, 0);
}

// A research-convention corpus (-O0 frontend modules) compares like with
// like: the baseline policy's output is measured with -Oz's tuning and code
// generation, as the -Oz reference is, so it equals -Oz exactly (at the
// stored -O0 level every module read larger than -Oz).
TEST_F(PolicyEvaluationTest, ResearchCorpusIsMeasuredAtOz) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path base =
      fs::path(tmp != nullptr ? tmp : "/tmp") / "eval-research";
  auto built = corpus::BuildFixtureCorpus(base.string(), {"sorting", "bits"},
                                          ir::ModuleConvention::kResearch);
  ASSERT_TRUE(built.ok()) << built.status();
  EvalOptions options = Options("baseline");
  options.corpus_dir = (base / "corpus").string();
  auto report = EvaluatePolicy(options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->modules.size(), 2u);
  for (const ModuleEval& m : report->modules) {
    EXPECT_TRUE(m.error.empty()) << m.error;
    EXPECT_EQ(m.pipeline, "default<Oz>");
    EXPECT_EQ(m.text_size, m.text_size_oz) << m.name;
    EXPECT_EQ(m.alloc_size, m.alloc_size_oz) << m.name;
  }
  EXPECT_DOUBLE_EQ(report->aggregates.alloc_oz_ratio, 1.0);
  // Its -O0 frontend output is not what clang -Oz compiles: no clang -Oz.
  EXPECT_EQ(report->aggregates.clang_oz_modules, 0);
  EXPECT_EQ(report->modules[0].alloc_size_clang_oz, 0);
  EXPECT_NE(report->convention.find("research"), std::string::npos);
  EXPECT_NE(FormatReportJson(*report).find("research modules"),
            std::string::npos);
}

// Beside the -Oz reference (opt-16's tuning), each real-build module's object
// from clang's own -Oz: byte for byte what `clang-16 -Oz -c` makes of the
// stored module, which is the source's own clang -Oz object.
TEST_F(PolicyEvaluationTest, ClangOzIsMeasuredBesideTheOzReference) {
  auto report = EvaluatePolicy(Options("baseline"));
  ASSERT_TRUE(report.ok()) << report.status();
  const nlohmann::json manifest = nlohmann::json::parse(
      std::ifstream(fs::path(*corpus_) / "manifest.json"));
  std::map<std::string, std::string> bitcode;
  for (const nlohmann::json& m : manifest["modules"]) {
    bitcode[m["name"]] = (fs::path(*corpus_) / m["bitcode_path"]).string();
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path out = fs::path(tmp != nullptr ? tmp : "/tmp") / "clang-oz.o";
  double log_vs_oz = 0;
  int differs = 0;
  for (const ModuleEval& m : report->modules) {
    ASSERT_TRUE(m.error.empty()) << m.error;
    ASSERT_TRUE(bitcode.count(m.name)) << m.name;
    const std::string command =
        "clang-16 -Oz -c '" + bitcode[m.name] + "' -o '" + out.string() + "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream in(out, std::ios::binary);
    const std::string object((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    auto alloc = codegen::AllocatedSectionBytes(object);
    auto text = codegen::TextSectionBytes(object);
    ASSERT_TRUE(alloc.ok() && text.ok()) << m.name;
    EXPECT_EQ(m.alloc_size_clang_oz, *alloc) << m.name;
    EXPECT_EQ(m.text_size_clang_oz, *text) << m.name;
    log_vs_oz += std::log(static_cast<double>(*alloc) / m.alloc_size_oz);
    differs += *alloc != m.alloc_size_oz;
  }
  const EvalAggregates& a = report->aggregates;
  EXPECT_EQ(a.clang_oz_modules, 4);
  EXPECT_EQ(a.clang_oz_differs, differs);
  EXPECT_NEAR(a.clang_oz_vs_oz, std::exp(log_vs_oz / 4), 1e-12);
  // The baseline policy is the -Oz reference, so both ratios are one.
  EXPECT_NEAR(a.alloc_clang_oz_ratio, a.clang_oz_vs_oz, 1e-12);
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(*report));
  EXPECT_EQ(j["aggregates"]["clang_oz_modules"], 4);
  EXPECT_GT(j["modules"][0]["alloc_size_clang_oz"].get<int64_t>(), 0);
  EXPECT_NE(FormatReportTable(*report).find("clang -Oz"), std::string::npos);
}

// The aggregates against the formulas of DESIGN.md computed here from the
// rows, on a policy that differs from -Oz.
TEST_F(PolicyEvaluationTest, AggregateFormulas) {
  auto report = EvaluatePolicy(Options("fixed:default<O1>"));
  ASSERT_TRUE(report.ok()) << report.status();
  double text_log = 0, ir_log = 0, over = 0, gym_log = 0;
  int n = 0, gym_n = 0;
  bool differs = false;
  for (const ModuleEval& m : report->modules) {
    ASSERT_TRUE(m.error.empty()) << m.error;
    differs |= m.text_size != m.text_size_oz;
    text_log += std::log(double(m.text_size_oz) / m.text_size);
    ir_log += std::log(double(m.ir_count_oz) / m.ir_count);
    over += double(m.ir_count_oz - m.ir_count) / m.ir_count_oz;
    if (m.ir_count < m.ir_count_o0) {
      gym_log += std::log(double(m.ir_count_o0 - m.ir_count) /
                          (m.ir_count_o0 - m.ir_count_oz));
      ++gym_n;
    }
    ++n;
  }
  EXPECT_TRUE(differs);
  const EvalAggregates& a = report->aggregates;
  EXPECT_NEAR(a.text_oz_ratio, std::exp(text_log / n), 1e-12);
  EXPECT_NEAR(a.geomean_oz_ratio, std::exp(ir_log / n), 1e-12);
  EXPECT_NEAR(a.over_oz, over / n, 1e-12);
  EXPECT_NEAR(a.gym_score, std::exp(gym_log / gym_n), 1e-12);
  EXPECT_EQ(a.gym_excluded, n - gym_n);
}

TEST_F(PolicyEvaluationTest, AggregateByHand) {
  std::vector<ModuleEval> rows(3);
  rows[0] = {"a", "", 100, 50, 40, 0, 1000, 800};  // IC 40, T 800
  rows[1] = {"b", "", 10, 8, 10, 0, 200, 250};     // IC = IC_O0: gym excl.
  rows[2].name = "c";
  rows[2].error = "load: broken";
  const EvalAggregates a = Aggregate(rows);
  EXPECT_EQ(a.modules, 2);
  EXPECT_EQ(a.failed, 1);
  EXPECT_NEAR(a.text_oz_ratio, std::sqrt(1000.0 / 800 * 200.0 / 250), 1e-12);
  EXPECT_NEAR(a.geomean_oz_ratio, std::sqrt(50.0 / 40 * 8.0 / 10), 1e-12);
  EXPECT_NEAR(a.over_oz, ((50.0 - 40) / 50 + (8.0 - 10) / 8) / 2, 1e-12);
  EXPECT_NEAR(a.gym_score, (100.0 - 40) / (100 - 50), 1e-12);
  EXPECT_EQ(a.gym_excluded, 1);
  EXPECT_EQ(a.text_larger_than_oz, 1);
  EXPECT_NEAR(a.worst_text_ratio, 1.25, 1e-12);

  rows[0].alloc_size_oz = 3000;
  rows[0].alloc_size = 2500;
  rows[1].alloc_size_oz = 900;
  rows[1].alloc_size = 1000;
  const EvalAggregates b = Aggregate(rows);
  EXPECT_NEAR(b.alloc_oz_ratio, std::sqrt(3000.0 / 2500 * 900.0 / 1000), 1e-12);
  EXPECT_EQ(b.alloc_larger_than_oz, 1);
  EXPECT_NEAR(b.worst_alloc_ratio, 1000.0 / 900, 1e-12);
}

TEST_F(PolicyEvaluationTest, ArtifactSingleAndTopK) {
  policy_runtime::testing::RandomArtifactOptions random;
  random.action_names = {"instcombine", "simplifycfg", "mem2reg", "dce"};
  random.candidate_pipelines = {"default<Oz>", "default<O1>", "default<O3>",
                                "default<Oz>,function(instcombine)"};
  const std::string path = *corpus_ + "/../p.plpolicy";
  ASSERT_TRUE(policy_runtime::WritePolicyArtifactFile(
                  policy_runtime::testing::RandomArtifact(random), path)
                  .ok());
  auto single = EvaluatePolicy(Options(path));
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->policy_kind, "artifact");
  EXPECT_EQ(single->policy_version.size(), 32u);
  EXPECT_EQ(single->aggregates.modules, 4);

  EvalOptions topk_options = Options("artifact:" + path);
  topk_options.mode = "topk";
  topk_options.top_k = 3;
  topk_options.budget = 1000000000;
  auto topk = EvaluatePolicy(topk_options);
  ASSERT_TRUE(topk.ok()) << topk.status();
  // Never larger than -Oz in total: topk compares whole objects.
  for (const ModuleEval& m : topk->modules) {
    ASSERT_TRUE(m.error.empty()) << m.error;
    EXPECT_LE(m.alloc_size, m.alloc_size_oz) << m.name << " " << m.note;
  }
  EXPECT_GE(topk->aggregates.alloc_oz_ratio, 1.0);
  EXPECT_EQ(topk->aggregates.alloc_larger_than_oz, 0);
}

// Fixed references are measured on every module like the policy's output,
// and the report compares the policy with each and names the best.
TEST_F(PolicyEvaluationTest, FixedReferencesAreMeasuredAndCompared) {
  EvalOptions options = Options("baseline");
  options.fixed_references = {"default<Oz>,codegen<machine-outliner>",
                              "default<O3>"};
  auto report = EvaluatePolicy(options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->fixed.size(), 3u);
  EXPECT_EQ(report->fixed[0].pipeline, "default<Oz>");
  EXPECT_DOUBLE_EQ(report->fixed[0].alloc_oz_ratio, 1.0);
  EXPECT_DOUBLE_EQ(report->fixed[0].policy_vs_fixed, 1.0);  // baseline = Oz
  std::vector<double> log_oz(2, 0.0);
  for (const ModuleEval& m : report->modules) {
    ASSERT_TRUE(m.error.empty()) << m.error;
    ASSERT_EQ(m.fixed_alloc_size.size(), 2u) << m.name;
    for (int f = 0; f < 2; ++f) {
      ASSERT_GT(m.fixed_alloc_size[f], 0) << m.name;
      log_oz[f] += std::log(static_cast<double>(m.alloc_size_oz) /
                            m.fixed_alloc_size[f]);
    }
  }
  double best_ratio = 1.0;
  std::string best = "default<Oz>";
  for (int f = 0; f < 2; ++f) {
    const FixedReferenceEval& fixed = report->fixed[f + 1];
    EXPECT_EQ(fixed.modules, 4);
    EXPECT_NEAR(fixed.alloc_oz_ratio, std::exp(log_oz[f] / 4), 1e-12);
    // The policy is -Oz here, so policy_vs_fixed is the inverse ratio.
    EXPECT_NEAR(fixed.policy_vs_fixed, 1.0 / fixed.alloc_oz_ratio, 1e-12);
    if (fixed.alloc_oz_ratio > best_ratio) {
      best_ratio = fixed.alloc_oz_ratio;
      best = fixed.pipeline;
    }
  }
  EXPECT_LT(report->fixed[2].alloc_oz_ratio, 1.0);  // -O3 is larger
  EXPECT_EQ(report->best_fixed, best);
  EXPECT_NEAR(report->policy_vs_best_fixed, 1.0 / best_ratio, 1e-12);
  EXPECT_NE(FormatReportTable(*report).find("policy vs best fixed"),
            std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(FormatReportJson(*report));
  EXPECT_EQ(j["fixed_pipelines"].size(), 3u);
  EXPECT_EQ(j["best_fixed"], best);
  EXPECT_EQ(j["modules"][0]["fixed_alloc_size"].size(), 2u);

  // A malformed reference fails every module, saying which pipeline.
  options.fixed_references = {"default<Oz>,no-such-pass"};
  options.max_modules = 1;
  auto bad = EvaluatePolicy(options);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_NE(bad->modules[0].error.find("fixed reference 'default<Oz>,"
                                       "no-such-pass'"),
            std::string::npos)
      << bad->modules[0].error;
}

// A module that hangs (an injected hang in its child) is reported failed
// at the time limit; the evaluation finishes.
TEST_F(PolicyEvaluationTest, AHangingModuleFailsNotTheEvaluation) {
  EvalOptions options = Options("baseline");
  options.module_timeout_s = 1;
  options.max_modules = 2;
  setenv("PHASELOOP_TEST_INJECT_FAULT", "hang", 1);
  auto report = EvaluatePolicy(options);
  unsetenv("PHASELOOP_TEST_INJECT_FAULT");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->modules.size(), 2u);
  for (const ModuleEval& row : report->modules) {
    EXPECT_NE(row.error.find("timed_out"), std::string::npos) << row.error;
  }
  EXPECT_EQ(report->aggregates.failed, 2);
}

// The review: on a speed (-O3) corpus the exact -Oz pipeline read 0.92 of
// -Oz (tuned and code-generated at -O3 against an -Oz reference).
TEST_F(PolicyEvaluationTest, ACorpusOfAnotherLevelIsRefused) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/o3";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/manifest.json")
      << R"({"modules": [{"name": "bits", "opt_level": "O3", "bitcode_path": ")"
      << std::filesystem::absolute("compiler_driver/fixtures/bits.c").string()
      << R"("}]})";
  EvalOptions options = Options("fixed:default<Oz>");
  options.corpus_dir = dir;
  options.split = "";
  auto report = EvaluatePolicy(options);
  EXPECT_TRUE(absl::IsInvalidArgument(report.status())) << report.status();
  EXPECT_NE(report.status().message().find("stored at -O3"), std::string::npos)
      << report.status();
}

TEST_F(PolicyEvaluationTest, CommandPrintsTableAndJsonAndRejectsBadInput) {
  EvalFlags flags;
  flags.options = Options("baseline");
  flags.options.max_modules = 2;
  std::ostringstream out, err;
  ASSERT_EQ(RunEval(flags, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("text_oz_ratio    1.0000"), std::string::npos)
      << out.str();
  // The command measures -Oz with the machine outliner unless told not to.
  EXPECT_NE(out.str().find("default<Oz>,codegen<machine-outliner>"),
            std::string::npos)
      << out.str();
  flags.json = true;
  std::ostringstream json_out;
  ASSERT_EQ(RunEval(flags, json_out, err), 0);
  const nlohmann::json j = nlohmann::json::parse(json_out.str());
  EXPECT_EQ(j["modules"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["aggregates"]["text_oz_ratio"].get<double>(), 1.0);

  flags.options.corpus_dir = "/nonexistent/corpus";
  std::ostringstream bad;
  EXPECT_EQ(RunEval(flags, out, bad), 2);
  EXPECT_NE(bad.str().find("/nonexistent/corpus"), std::string::npos);
  flags.options = Options("no-such-policy-file");
  EXPECT_EQ(RunEval(flags, out, bad), 2);
  flags.options = Options("baseline");
  flags.options.mode = "beam";
  EXPECT_EQ(RunEval(flags, out, bad), 2);
  flags.options = Options("baseline");
  flags.no_fixed = true;
  flags.fixed = {"default<O2>"};
  std::ostringstream contradiction;
  EXPECT_EQ(RunEval(flags, out, contradiction), 2);
  EXPECT_NE(contradiction.str().find("--no-fixed"), std::string::npos);
  // A fixed reference no policy may run failed every module with exit 0.
  flags.options = Options("baseline");
  flags.no_fixed = false;
  flags.fixed = {"bogus<pass>"};
  std::ostringstream refused;
  EXPECT_EQ(RunEval(flags, out, refused), 2);
  EXPECT_NE(refused.str().find("--fixed bogus<pass>"), std::string::npos)
      << refused.str();
}

}  // namespace
}  // namespace phaseloop::evaluation
