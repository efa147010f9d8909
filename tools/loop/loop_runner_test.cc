// The loop's state machine with its commands scripted: what each stage
// runs, what it reads back, and how a stop, a failure and a restart resume
// it. (tests/loop_test.sh runs the real commands end to end.)
#include "tools/loop/loop_runner.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>

#include "absl/strings/str_join.h"
#include "canary/controller/canary_state_store.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "tools/loop/loop_stages.h"
#include "tools/loop/loop_state.h"

namespace phaseloop::loop {
namespace {

std::string ArgAfter(const std::vector<std::string>& argv,
                     const std::string& flag) {
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag) return argv[i + 1];
  }
  return "";
}

// Plays each command by its subcommand ("search", "train", "policy list",
// ...): writes what the real one prints to stdout, returns its exit code.
class ScriptedExecutor : public StageExecutor {
 public:
  using Script = std::function<int(const std::vector<std::string>& argv,
                                   const std::string& stdout_path)>;
  std::map<std::string, Script> scripts;
  std::vector<std::string> ran;    // "search", "train", ...
  std::vector<std::string> argvs;  // each command line, joined by blanks
  std::string stop_at;             // a command that gets stopped
  bool stop = false;
  int64_t now = 1000;

  absl::StatusOr<Result> Run(const std::vector<std::string>& argv,
                             const std::string& log_path,
                             const std::string& stdout_path,
                             const std::string& label) override {
    std::string name = argv[1];
    if (argv[1] == "policy" || argv[1] == "buffer" || argv[1] == "canary") {
      name += " " + argv[2];
    }
    ran.push_back(name);
    argvs.push_back(absl::StrJoin(argv, " "));
    now += 1000;
    // The search and the stage write their own buffer file, as the real
    // ones do (a resumed stage merges it again if they finished).
    if (name == "search" || name == "stage") {
      const std::string db = ArgAfter(argv, "--buffer");
      if (!db.empty()) std::ofstream(db, std::ios::app) << "";
    }
    std::ofstream(log_path, std::ios::app) << label << "\n";
    if (name == stop_at) {
      stop = true;
      return Result{0, true};
    }
    auto script = scripts.find(name);
    if (script == scripts.end()) {
      std::ofstream(stdout_path) << "{}";
      return Result{0, false};
    }
    return Result{script->second(argv, stdout_path), false};
  }
  bool StopRequested() const override { return stop; }
  void Progress(const std::string& line) override { progress += line + "\n"; }
  int64_t NowMs() const override { return now; }
  std::string progress;
};

class LoopRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_dir_ = testing::MakeTempDir();
    config_.source = "loop.yaml";
    config_.service = "service.yaml";
    config_.learner = "learner.yaml";
    config_.workloads_dir = "workloads";
    config_.explore_workload = "zlib";
    config_.stage_workload = "zlib";
    config_.gate_workloads = {"bc"};
    setup_.loop_id = "demo";
    setup_.state_dir = state_dir_;
    setup_.buffer = state_dir_ + "/buffer.db";
    setup_.phaseloop = "phaseloop";
    setup_.cc = "phaseloop-cc";
    setup_.kafka = "127.0.0.1:1";
    setup_.policy_store = "127.0.0.1:2";
    setup_.iterations = 1;
    auto& s = executor_.scripts;
    s["search"] = [](auto&, const std::string& out) {
      std::ofstream(out) << R"({"counts": {"evaluations": 7},
                              "confirmed_speedup": {"median": 1.02}})";
      return 0;
    };
    s["train"] = [this](auto& argv, const std::string& out) {
      ++trainings_;
      stable_given_.push_back(ArgAfter(argv, "--stable-version"));
      explore_untried_ = std::find(argv.begin(), argv.end(),
                                   "--explore-untried") != argv.end();
      std::ofstream(ArgAfter(argv, "--out")) << "policy";
      std::ofstream(out) << R"({"policy_version": "v)" << trainings_
                         << R"(aaaaaaaaaaaaaaaa", "metrics":
                              {"train_transitions": 42},
                              "exploration": {"exploring": true,
                                "pipeline": "tuned<O3;inline-threshold=500>",
                                "reason": "canaries have judged every choice"},
                              "gate": {"new": 1.01}})";
      return 0;
    };
    s["policy list"] = [this](auto&, const std::string& out) {
      std::ofstream(out) << R"({"policies": [], "channels": [{"name":
          "stable", "policy_version": ")"
                         << stable_ << R"("}]})";
      return 0;
    };
    s["stage"] = [](auto&, const std::string& out) {
      std::ofstream(out) << R"({"workloads": [{"verdict": "measured",
          "speedup": {"median": 1.03, "low": 1.01, "high": 1.05}}]})";
      return 0;
    };
    s["canary run"] = [this](auto& argv, const std::string&) {
      v1::CanaryRun run;
      run.set_canary_id(ArgAfter(argv, "--canary-id"));
      run.set_phase(canary_phase_);
      run.set_has_final_reward(true);
      run.set_final_reward(canary_phase_ == "promoted" ? 0.02 : -0.15);
      run.set_candidate_build_id("build-c");
      lower_bound_ = ArgAfter(argv, "--staging-lower-bound");
      EXPECT_TRUE(canary::CanaryStateStore(state_dir_).Save(run).ok());
      return canary_phase_ == "promoted" ? 0 : 3;
    };
  }

  absl::StatusOr<v1::LoopRun> RunLoop() {
    LoopRunner runner(config_, setup_, &executor_);
    return runner.Run();
  }

  std::string state_dir_;
  LoopConfig config_;
  LoopSetup setup_;
  ScriptedExecutor executor_;
  int trainings_ = 0;
  std::string stable_;
  std::string canary_phase_ = "promoted";
  std::string lower_bound_;                // what the canary was given
  bool explore_untried_ = false;           // train was asked to explore
  std::vector<std::string> stable_given_;  // each train's --stable-version
};

TEST_F(LoopRunnerTest, AnIterationRunsEveryStageAndRecordsItsFigures) {
  auto run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "done");
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","),
            "search,buffer import,train,policy list,policy push,stage,"
            "buffer import,canary run");
  // Given a store (no directory of its own), the loop records its address.
  EXPECT_EQ(run->policy_store(), "127.0.0.1:2");
  EXPECT_EQ(run->buffer_path(), setup_.buffer);
  ASSERT_EQ(run->iterations_size(), 1);
  const v1::LoopIteration& it = run->iterations(0);
  EXPECT_EQ(it.explore_evaluations(), 7);
  EXPECT_EQ(it.train_transitions(), 42);
  EXPECT_TRUE(explore_untried_);
  EXPECT_EQ(it.explored_pipeline(), "tuned<O3;inline-threshold=500>");
  EXPECT_EQ(it.exploration_reason(), "canaries have judged every choice");
  EXPECT_EQ(it.candidate_version(), "v1aaaaaaaaaaaaaaaa");
  EXPECT_NEAR(it.staging_low(), 1.01, 1e-9);
  EXPECT_EQ(lower_bound_, "1.01");  // staging's interval reaches the budget
  EXPECT_EQ(it.canary_id(), "demo-1");
  EXPECT_EQ(it.canary_phase(), "promoted");
  EXPECT_EQ(it.stable_after(), it.candidate_version());
  EXPECT_NEAR(it.final_reward(), 0.02, 1e-9);
  for (const auto& stage : it.stages()) {
    EXPECT_EQ(stage.status(), "done") << stage.name();
    EXPECT_EQ(stage.attempts(), 1) << stage.name();
  }
  // Saved: a second start finds it done and runs nothing.
  executor_.ran.clear();
  executor_.argvs.clear();
  auto again = RunLoop();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(executor_.ran.empty());
  EXPECT_EQ(again->starts(), 2);
  // More iterations continue it, here with the store by another address
  // (`phaseloop loop` checked that it holds what the loop published): the
  // new address is saved and given to the stages.
  setup_.iterations = 2;
  setup_.policy_store = "localhost:2";
  stable_ = "v1aaaaaaaaaaaaaaaa";
  auto more = RunLoop();
  ASSERT_TRUE(more.ok());
  EXPECT_EQ(more->policy_store(), "localhost:2");
  const std::string argvs = absl::StrJoin(executor_.argvs, "\n");
  EXPECT_NE(argvs.find("--policy-store localhost:2"), std::string::npos)
      << argvs;
  EXPECT_EQ(argvs.find("127.0.0.1:2"), std::string::npos) << argvs;
  EXPECT_EQ(more->iterations_size(), 2);
  EXPECT_EQ(more->iterations(1).stable_before(), "v1aaaaaaaaaaaaaaaa");
  EXPECT_NE(FormatIterations(*more).find("promoted"), std::string::npos);
}

TEST_F(LoopRunnerTest, ARefusedGateEndsTheIterationWithNothingRolledOut) {
  executor_.scripts["train"] = [](auto&, const std::string& out) {
    std::ofstream(out) << R"({"gate": {"passed": false, "new": 0.97,
                             "modules": 1, "new_failed_modules": 1}})";
    return 3;
  };
  auto run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "done");
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","), "search,buffer import,train");
  const v1::LoopIteration& it = run->iterations(0);
  EXPECT_FALSE(it.gate_passed());
  for (const auto& stage : it.stages()) {
    if (stage.name() == "publish" || stage.name() == "stage" ||
        stage.name() == "canary") {
      EXPECT_EQ(stage.status(), "skipped") << stage.name();
    }
  }
}

TEST_F(LoopRunnerTest, TrainIsToldTheStableItsPolicyWouldReplace) {
  setup_.iterations = 2;
  auto run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  // Unknown before any iteration listed the store; then iteration 1's
  // candidate, promoted by its canary.
  EXPECT_EQ(stable_given_,
            (std::vector<std::string>{"", "v1aaaaaaaaaaaaaaaa"}));

  // A rolled-back first candidate leaves plain clang stable.
  setup_.loop_id = "rolled-back";
  stable_given_.clear();
  canary_phase_ = "rolled_back";
  run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(stable_given_, (std::vector<std::string>{"", "plain"}));
}

TEST_F(LoopRunnerTest, AnExplorationTheGateRefusedIsNotTriedAgain) {
  std::vector<std::vector<std::string>> skipped;
  executor_.scripts["train"] = [&](auto& argv, const std::string& out) {
    std::vector<std::string> skip;
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--explore-skip") skip.push_back(argv[i + 1]);
    }
    skipped.push_back(skip);
    std::ofstream(out) << R"({"gate": {"passed": false, "new": 0.97,
                             "modules": 1, "new_failed_modules": 1},
                             "exploration": {"exploring": true,
                             "pipeline": "p)"
                       << skipped.size() << R"(", "reason": "r"}})";
    return 3;
  };
  setup_.iterations = 3;
  auto run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_TRUE(skipped[0].empty());
  EXPECT_EQ(skipped[1], std::vector<std::string>{"p1"});
  EXPECT_EQ(skipped[2], (std::vector<std::string>{"p1", "p2"}));
  EXPECT_EQ(run->iterations(0).explored_pipeline(), "p1");
}

TEST_F(LoopRunnerTest, AStableCandidateAndAMiscompileAreNeverRolledOut) {
  stable_ = "v1aaaaaaaaaaaaaaaa";  // training gives the stable policy again
  auto run = RunLoop();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","),
            "search,buffer import,train,policy list");

  setup_.loop_id = "miscompiling";
  stable_.clear();
  executor_.ran.clear();
  executor_.scripts["stage"] = [](auto&, const std::string& out) {
    std::ofstream(out) << R"({"workloads": [{"verdict": "miscompile",
                             "detail": "run 1 stdout differs"}]})";
    return 3;
  };
  run = RunLoop();
  ASSERT_TRUE(run.ok());
  // The miscompile's record is merged; no canary.
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","),
            "search,buffer import,train,policy list,policy push,stage,"
            "buffer import");
  EXPECT_EQ(run->iterations(0).staging_verdict(), "miscompile");
}

TEST_F(LoopRunnerTest, AStoppedStageResumesAloneAndIsCountedOnce) {
  executor_.stop_at = "canary run";
  auto run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "running");
  EXPECT_EQ(run->iterations(0).finished_ms(), 0);
  // A new process: nothing stops it now.
  executor_.stop = false;
  executor_.stop_at.clear();
  executor_.ran.clear();
  run = RunLoop();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->phase(), "done");
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","), "canary run");
  EXPECT_EQ(trainings_, 1);
  for (const auto& stage : run->iterations(0).stages()) {
    EXPECT_EQ(stage.attempts(), stage.name() == "canary" ? 2 : 1)
        << stage.name();
  }
}

TEST_F(LoopRunnerTest, AFailedStageStopsTheLoopAndRerunsAfterTheFix) {
  executor_.scripts["stage"] = [](auto&, const std::string&) { return 2; };
  auto run = RunLoop();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->phase(), "failed");
  EXPECT_NE(run->failure().find("iteration 1 stage: phaseloop stage exited 2"),
            std::string::npos)
      << run->failure();
  EXPECT_NE(run->failure().find("/iteration-1/stage.log"), std::string::npos);
  // "Fixed" so that it exits 0 but gives no speed figure: the loop fails
  // rather than tell the canary a made-up 1.0.
  executor_.scripts["stage"] = [](auto&, const std::string& out) {
    std::ofstream(out) << R"({"workloads": [{"verdict": "unusable",
                             "detail": "the baseline's output varies"}]})";
    return 0;
  };
  executor_.ran.clear();
  run = RunLoop();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->phase(), "failed");
  EXPECT_NE(run->failure().find("phaseloop stage gave no speed figure for "
                                "zlib (verdict unusable: the baseline's "
                                "output varies)"),
            std::string::npos)
      << run->failure();
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","), "stage");
  executor_.scripts.erase("stage");  // and with nothing at all ({})
  executor_.ran.clear();
  run = RunLoop();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->phase(), "failed");
  EXPECT_NE(run->failure().find("(verdict none)"), std::string::npos)
      << run->failure();
  executor_.scripts["stage"] = [](auto&, const std::string& out) {
    std::ofstream(out) << R"({"workloads": [{"verdict": "identical",
        "speedup": {"median": 1.0, "low": 1.0, "high": 1.0}}]})";
    return 0;
  };
  executor_.ran.clear();
  run = RunLoop();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->phase(), "done");
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","),
            "stage,buffer import,canary run");
}

// A command's JSON the loop cannot read as it expects fails the stage,
// named, never the loop process; a training that names no policy fails too.
TEST_F(LoopRunnerTest, UnreadableCommandOutputFailsTheStage) {
  executor_.scripts["search"] = [](auto&, const std::string& out) {
    std::ofstream(out) << R"({"counts": {"evaluations": null}})";
    return 0;
  };
  auto run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "failed");
  EXPECT_NE(run->failure().find("iteration 1 explore: the output of its "
                                "command is not what the loop reads"),
            std::string::npos)
      << run->failure();
  // Fixed, the same command runs the search again (not its bad output).
  executor_.scripts.erase("search");
  executor_.ran.clear();
  run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "done");
  ASSERT_FALSE(executor_.ran.empty());
  EXPECT_EQ(executor_.ran[0], "search");

  setup_.loop_id = "nameless";
  executor_.scripts["train"] = [](auto&, const std::string& out) {
    std::ofstream(out) << R"({"metrics": {"train_transitions": 3}})";
    return 0;
  };
  run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "failed");
  EXPECT_NE(run->failure().find("named no policy_version"), std::string::npos)
      << run->failure();
}

// Stopped while merging what the search found: the search is not run
// again (its new ids would put its rows in the buffer twice); its file is
// merged again, which adds nothing twice.
TEST_F(LoopRunnerTest, AStageStoppedInItsMergeMergesAgainWithoutRerunning) {
  executor_.stop_at = "buffer import";
  auto run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "running");
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","), "search,buffer import");
  executor_.stop = false;
  executor_.stop_at.clear();
  executor_.ran.clear();
  run = RunLoop();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->phase(), "done");
  EXPECT_EQ(absl::StrJoin(executor_.ran, ","),
            "buffer import,train,policy list,policy push,stage,buffer "
            "import,canary run");
  EXPECT_EQ(run->iterations(0).explore_evaluations(), 7);  // its report
}

TEST_F(LoopRunnerTest, ARolledBackCandidateKeepsStable) {
  stable_ = "stableversion000";
  canary_phase_ = "rolled_back";
  auto run = RunLoop();
  ASSERT_TRUE(run.ok());
  const v1::LoopIteration& it = run->iterations(0);
  EXPECT_EQ(it.canary_phase(), "rolled_back");
  EXPECT_EQ(it.stable_after(), "stableversion000");
  EXPECT_LT(it.final_reward(), 0);
}

TEST_F(LoopRunnerTest, ABufferPathThatIsNotUtf8IsRefusedBeforeAnyStage) {
  // JSON would keep "/data/cafb.db": a resumed loop opened another buffer.
  setup_.buffer = "/data/caf\xe9/b.db";
  auto run = RunLoop();
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("buffer_path is not UTF-8"),
            std::string::npos)
      << run.status();
  EXPECT_TRUE(executor_.ran.empty());
}

// A stable build Bazel took wholly from its cache records no decisions: its
// figures are the same policy's earlier build's, newest first, and say so.
TEST(EarlierBuildFiguresTest, TheSamePolicysNewestEarlierBuild) {
  v1::LoopRun run;
  v1::LoopIteration* first = run.add_iterations();
  first->set_candidate_version("v2");
  first->set_stable_before("v1");
  first->mutable_candidate_build()->set_build_id("build-v2-first");
  first->mutable_candidate_build()->set_modules(12);
  first->mutable_stable_build()->set_build_id("build-v1");
  first->mutable_stable_build()->set_modules(12);
  v1::LoopIteration* second = run.add_iterations();
  second->set_candidate_version("v3");
  second->set_stable_before("v2");
  second->mutable_stable_build()->set_build_id("build-v2-cached");
  second->mutable_stable_build()->set_figures_from_build_id("build-v2-first");
  second->mutable_stable_build()->set_modules(12);
  run.add_iterations();  // the one being run

  StageContext ctx;
  ctx.run = &run;
  ctx.index = 2;
  const v1::LoopBuildFigures* v2 = EarlierBuildFigures(ctx, "v2");
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->build_id(), "build-v2-cached");  // the newest
  EXPECT_EQ(v2->figures_from_build_id(), "build-v2-first");
  const v1::LoopBuildFigures* v1 = EarlierBuildFigures(ctx, "v1");
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->build_id(), "build-v1");
  EXPECT_EQ(EarlierBuildFigures(ctx, "v3"), nullptr);  // no figures yet
  EXPECT_EQ(EarlierBuildFigures(ctx, ""), nullptr);
  ctx.index = 1;  // only the first iteration is earlier
  EXPECT_EQ(EarlierBuildFigures(ctx, "v2")->build_id(), "build-v2-first");
  ctx.run = nullptr;
  EXPECT_EQ(EarlierBuildFigures(ctx, "v2"), nullptr);
}

}  // namespace
}  // namespace phaseloop::loop
