// Staging the example workload (a real Makefile C project) end to end
// through the real wrapper: identical, measured, unusable and miscompiled
// candidates. Timing budgets are tiny: these check verdicts and records,
// never speed.
#include "staging_harness/staging/stage_workload.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/files/file_lock.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/runner/runner_test_util.h"

namespace phaseloop::staging {
namespace {
namespace fs = std::filesystem;

class StageWorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<workloads::Workload> loaded = runner::ExampleWorkload();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    workload_ = *loaded;
    absl::StatusOr<runner::Compilers> compilers = runner::RunfilesCompilers();
    ASSERT_TRUE(compilers.ok()) << compilers.status();
    options_.compilers = *compilers;
    options_.work_dir = testing::MakeTempDir();
    options_.timing.min_pairs = 3;
    options_.timing.max_pairs = 4;
    options_.timing.warmup_passes = 0;
  }

  absl::StatusOr<StageResult> Stage(const std::string& candidate) {
    options_.candidate_policy = candidate;
    return StageWorkload(workload_, options_, log_);
  }

  // The records stored in a new buffer, as `stage --buffer` stores them;
  // the miscompiles the buffer then holds.
  absl::StatusOr<std::vector<v1::Miscompile>> StoredMiscompiles(
      const StageRecords& records) {
    auto store =
        replay_buffer::OpenReplayStore(testing::MakeTempDir() + "/buffer.db");
    if (!store.ok()) return store.status();
    replay_buffer::WriteBatch batch;
    batch.decisions = records.decisions;
    batch.rewards = records.rewards;
    if (records.miscompile) batch.miscompiles.push_back(*records.miscompile);
    if (absl::Status written = (*store)->Write(batch); !written.ok()) {
      return written;
    }
    return (*store)->ReadMiscompiles();
  }

  workloads::Workload workload_;
  StageOptions options_;
  std::ostringstream log_;
};

TEST_F(StageWorkloadTest, ByteIdenticalArtifactsAreNotTimed) {
  absl::StatusOr<StageResult> result = Stage("baseline");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, Verdict::kIdentical);
  EXPECT_FALSE(result->timing.has_value());
  EXPECT_EQ(result->reward, 0);
  StageRecords records = RecordsOf(*result);
  ASSERT_EQ(records.rewards.size(), 1u);
  EXPECT_EQ(records.rewards[0].pairs(), 0);
  EXPECT_EQ(records.rewards[0].value(), 0);
  EXPECT_FALSE(records.rewards[0].has_executed_ir_ratio());  // not counted
  EXPECT_FALSE(records.miscompile.has_value());

  // Counting asked for: the same binary executes the same, nothing is built.
  options_.count_executed = true;
  result = Stage("baseline");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->executed_ir_ratio, 1);
  EXPECT_FALSE(result->baseline_executed.has_value());
  EXPECT_EQ(RecordsOf(*result).rewards[0].executed_ir_ratio(), 1);
}

// A stage, a runtime search and a training's speed gate each prepare a
// stager; two in one work directory replaced each other's builds.
TEST_F(StageWorkloadTest, OneStagerAtATimeInAWorkDirectory) {
  const std::string lock_path = options_.work_dir + ".lock";
  {
    absl::StatusOr<files::FileLock> held =
        files::FileLock::Acquire(lock_path, 0);
    ASSERT_TRUE(held.ok()) << held.status();
    absl::StatusOr<std::unique_ptr<WorkloadStager>> refused =
        WorkloadStager::Prepare(workload_, options_, log_);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("another phaseloop run"),
              std::string::npos)
        << refused.status();
    EXPECT_NE(refused.status().message().find(options_.work_dir),
              std::string::npos);
    EXPECT_FALSE(fs::exists(options_.work_dir + "/inputs"))
        << "refused before anything is made";
  }
  absl::StatusOr<std::unique_ptr<WorkloadStager>> stager =
      WorkloadStager::Prepare(workload_, options_, log_);
  ASSERT_TRUE(stager.ok()) << stager.status() << log_.str();
  // Held while the stager lives, let go with it.
  EXPECT_TRUE(
      absl::IsUnavailable(files::FileLock::Acquire(lock_path, 0).status()));
  stager->reset();
  EXPECT_TRUE(files::FileLock::Acquire(lock_path, 0).ok());
}

TEST_F(StageWorkloadTest, ExecutedIrIsCountedBesideTheTimeTheSameEachTime) {
  options_.count_executed = true;
  absl::StatusOr<std::unique_ptr<WorkloadStager>> stager =
      WorkloadStager::Prepare(workload_, options_, log_);
  ASSERT_TRUE(stager.ok()) << stager.status() << log_.str();
  std::vector<StageResult> results;
  for (const char* label : {"first", "second"}) {
    absl::StatusOr<StageResult> result =
        (*stager)->Evaluate("fixed:default<O1>", label, options_.timing);
    ASSERT_TRUE(result.ok()) << result.status() << log_.str();
    ASSERT_EQ(result->verdict, Verdict::kMeasured) << result->detail;
    ASSERT_TRUE(result->baseline_executed && result->candidate_executed);
    results.push_back(*result);
  }
  const ExecutedIr& baseline = *results[0].baseline_executed;
  const ExecutedIr& candidate = *results[0].candidate_executed;
  ASSERT_TRUE(baseline.available) << baseline.unavailable << log_.str();
  ASSERT_TRUE(candidate.available) << candidate.unavailable << log_.str();
  EXPECT_GT(baseline.count, 1000000);  // 1.4 MB of words, each looked at
  EXPECT_EQ(baseline.processes, 2);    // one per run command
  // Deterministic: the second candidate build executes exactly as many.
  EXPECT_EQ(results[1].candidate_executed->count, candidate.count);
  // -O1 against -O3 changes what executes.
  EXPECT_NE(baseline.count, candidate.count);
  EXPECT_DOUBLE_EQ(results[0].executed_ir_ratio,
                   double(baseline.count) / double(candidate.count));
  EXPECT_NE(results[0].executed_ir_ratio, 1);
  // The counting builds are builds of their own, not the timed ones.
  EXPECT_NE(log_.str().find("[baseline-count]"), std::string::npos);
  EXPECT_NE(log_.str().find("[first-count]"), std::string::npos);

  StageRecords records = RecordsOf(results[0]);
  ASSERT_EQ(records.rewards.size(), 1u);
  ASSERT_TRUE(records.rewards[0].has_executed_ir_ratio());
  EXPECT_DOUBLE_EQ(records.rewards[0].executed_ir_ratio(),
                   results[0].executed_ir_ratio);
}

TEST_F(StageWorkloadTest, AProgramEndingByUnderscoreExitHasNoExecutedCount) {
  workload_.build.command =
      "make wordfreq && printf '#include <unistd.h>\\nint main(void) { "
      "_exit(0); }\\n' > quick.c && $CC $CFLAGS -c quick.c && "
      "$CC quick.o -o quick";
  workload_.build.artifacts = {"wordfreq", "quick"};
  workload_.runs[1].command = "./quick";
  options_.count_executed = true;
  absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_EQ(result->verdict, Verdict::kMeasured) << result->detail;
  ASSERT_TRUE(result->baseline_executed.has_value());
  EXPECT_FALSE(result->baseline_executed->available);
  EXPECT_NE(result->baseline_executed->unavailable.find(
                "run 'generated' wrote no count"),
            std::string::npos)
      << result->baseline_executed->unavailable;
  EXPECT_EQ(result->executed_ir_ratio, 0);
  EXPECT_FALSE(RecordsOf(*result).rewards[0].has_executed_ir_ratio());
}

TEST_F(StageWorkloadTest, ADifferentProgramIsCheckedThenTimedInPairs) {
  absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_EQ(result->verdict, Verdict::kMeasured) << result->detail;
  ASSERT_TRUE(result->timing.has_value());
  const TimingResult& timing = *result->timing;
  EXPECT_GE(timing.baseline.size(), 3u);
  EXPECT_LE(timing.baseline.size(), 4u);
  EXPECT_LE(timing.wall.low, timing.wall.median);
  EXPECT_LE(timing.wall.median, timing.wall.high);
  EXPECT_DOUBLE_EQ(result->reward, std::log(timing.wall.median));
  EXPECT_NE(log_.str().find("check: baseline twice"), std::string::npos);
  EXPECT_NE(log_.str().find("timing:"), std::string::npos);

  // The reward joins the candidate build's decisions by build_id.
  StageRecords records = RecordsOf(*result);
  ASSERT_EQ(records.rewards.size(), 1u);
  const v1::FinalReward& reward = records.rewards[0];
  EXPECT_EQ(reward.source(), "staging");
  EXPECT_EQ(reward.workload(), "example");
  EXPECT_EQ(reward.build_id(), result->candidate.build_id);
  EXPECT_EQ(reward.pairs(), static_cast<int>(timing.baseline.size()));
  EXPECT_DOUBLE_EQ(reward.value_low(), std::log(timing.wall.low));
  ASSERT_EQ(records.decisions.size(), 2u);  // compile, then link
  const bool compile_first = records.decisions[0].outcome() == v1::OPTIMIZED;
  const v1::Decision& compiled = records.decisions[compile_first ? 0 : 1];
  const v1::Decision& linked = records.decisions[compile_first ? 1 : 0];
  EXPECT_EQ(compiled.outcome(), v1::OPTIMIZED);
  EXPECT_EQ(compiled.build_id(), reward.build_id());
  EXPECT_EQ(compiled.pipeline(), "default<O1>");
  EXPECT_EQ(reward.policy_version(), compiled.policy_version());
  EXPECT_EQ(linked.reason(), "not_compile_only");
  EXPECT_EQ(result->units, 2);
  EXPECT_EQ(result->optimized_units, 1);
}

TEST_F(StageWorkloadTest,
       OutputsThatDifferFromRunToRunMakeTheWorkloadUnusable) {
  workload_.runs[0].command =
      "./wordfreq data/words.txt; od -An -N8 -tu8 /dev/urandom";
  absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, Verdict::kUnusable);
  EXPECT_NE(result->detail.find("differ from run to run"), std::string::npos)
      << result->detail;
  EXPECT_FALSE(result->timing.has_value());
  StageRecords records = RecordsOf(*result);
  EXPECT_TRUE(records.rewards.empty());
  EXPECT_FALSE(records.miscompile.has_value());
}

TEST_F(StageWorkloadTest, AnO0ReferenceThatDisagreesMakesTheWorkloadUnusable) {
  // The program's output depends on how it was compiled, as a program with
  // undefined behaviour's may: the build records its flags for the run.
  workload_.build.command = "make wordfreq && echo \"$CFLAGS\" > flags.txt";
  workload_.build.artifacts = {"wordfreq", "flags.txt"};
  workload_.runs[0].command = "./wordfreq data/words.txt; cat flags.txt";
  absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, Verdict::kUnusable);
  EXPECT_NE(result->detail.find("-O0 reference"), std::string::npos)
      << result->detail;
}

TEST_F(StageWorkloadTest, ACandidateSlowerThanTheTimeLimitIsNoMiscompile) {
  // The candidate's own flag makes its run sleep past the limit the
  // baseline keeps: too slow, nothing blamed or recorded as a miscompile.
  workload_.build.command = "make wordfreq && echo \"$CFLAGS\" > flags.txt";
  workload_.build.artifacts = {"wordfreq", "flags.txt"};
  workload_.runs[0].command =
      "grep -q SLOW flags.txt && sleep 30; ./wordfreq data/words.txt";
  workload_.runs[0].timeout_s = 3;
  options_.candidate_cflags = "-DSLOW";
  absl::StatusOr<StageResult> result = Stage("baseline");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, Verdict::kTimedOut) << result->detail;
  EXPECT_NE(result->detail.find("the candidate run timed out"),
            std::string::npos)
      << result->detail;
  EXPECT_FALSE(result->timing.has_value());
  // Recorded with its own cause, not as a miscompile; the flags made the
  // difference, so no pipeline is blamed.
  StageRecords records = RecordsOf(*result);
  ASSERT_TRUE(records.miscompile.has_value());
  EXPECT_EQ(records.miscompile->verdict(), "timed_out");
  EXPECT_EQ(records.miscompile->what(), "timed_out");
  EXPECT_TRUE(result->blamed.empty());
  EXPECT_TRUE(records.rewards.empty());
  // And a buffer stores it (its schema refused the cause until version 5).
  auto stored = StoredMiscompiles(records);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].verdict(), "timed_out");
}

TEST_F(StageWorkloadTest, AMismatchFromTheCandidatesFlagsBlamesNoPipeline) {
  // -DBREAK changes what the program prints; every module runs the
  // baseline's pipeline, so no (module, pipeline) pair is to blame.
  workload_.runs[0].command = "./wordfreq data/words.txt; cat cflags.txt";
  workload_.build.artifacts = {"wordfreq", "cflags.txt"};
  options_.candidate_cflags = "-DBREAK";
  // Also with an assembly listing of the same source after the build: its
  // pass-through record names the source, with no pipeline (it made the
  // baseline's pipeline read as "", and the candidate's module was blamed).
  for (const std::string listing :
       {"", " && $CC $CFLAGS -S -o wordfreq.s wordfreq.c"}) {
    SCOPED_TRACE(listing);
    workload_.build.command =
        "make wordfreq && { echo \"$CFLAGS\" | grep -o BREAK > cflags.txt || "
        "true; }" +
        listing;
    options_.work_dir = testing::MakeTempDir();
    absl::StatusOr<StageResult> result = Stage("baseline");
    ASSERT_TRUE(result.ok()) << result.status() << log_.str();
    ASSERT_EQ(result->verdict, Verdict::kMiscompile) << result->detail;
    EXPECT_TRUE(result->blamed.empty());
    EXPECT_EQ(result->cause, "build_flags");
    auto stored = StoredMiscompiles(RecordsOf(*result));
    ASSERT_TRUE(stored.ok()) << stored.status();
    ASSERT_EQ(stored->size(), 1u);
    EXPECT_EQ((*stored)[0].verdict(), "build_flags");
    EXPECT_EQ((*stored)[0].blamed_size(), 0);
  }
}

// Builds that never put the program in phaseloop-cc's hands stage clang
// against clang: bad input naming the cause, never "identical" (which
// `stage --buffer` recorded as a reward of 0).
TEST_F(StageWorkloadTest, ABuildThePolicyNeverReachedIsBadInput) {
  struct Case {
    std::string build, env, expected;
  };
  const Case cases[] = {
      // The Makefile's compiler wins over the harness's.
      {"make CC=/usr/bin/clang-16 wordfreq", "",
       "ran no compiler command through phaseloop-cc"},
      // make's built-in one-step rule: compile and link in one command.
      {"rm -f Makefile && make wordfreq", "",
       "compiled none of the build's 1 compiler commands itself"},
      // The Makefile's own level.
      {"make CFLAGS=-O1 wordfreq", "", "the build compiled at O1 1"},
      // A configure probe compiled with the harness's CFLAGS (-O3) before
      // the Makefile's own level: the probe is not the program.
      {"echo 'int main(void) { return 0; }' > conftest.c && $CC $CFLAGS -c "
       "conftest.c && make CFLAGS=-O1 wordfreq",
       "",
       "the build compiled at O1 1 (level and units; 1 configure probe(s) "
       "and compiler queries (conftest.c, CMake's try_compile, --version) not "
       "counted), none at -O3"},
      // Only the probes reached the wrapper: the Makefile names its compiler.
      // (configure asks the compiler its version first: a query, no input).
      {"$CC --version > /dev/null && "
       "echo 'int main(void) { return 0; }' > conftest.c && $CC $CFLAGS -c "
       "conftest.c && make CC=/usr/bin/clang-16 wordfreq",
       "",
       "ran only its configure probes and queries through phaseloop-cc (2 "
       "commands"},
      // The wrapper switched off in the user's environment.
      {"make wordfreq", "PHASELOOP_DISABLE", "DISABLED kill_switch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.build + " " + c.env);
    workload_.build.command = c.build;
    options_.work_dir = testing::MakeTempDir();
    if (!c.env.empty()) setenv(c.env.c_str(), "1", 1);
    absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
    if (!c.env.empty()) unsetenv(c.env.c_str());
    ASSERT_FALSE(result.ok()) << VerdictName(result->verdict) << log_.str();
    EXPECT_TRUE(absl::IsInvalidArgument(result.status())) << result.status();
    EXPECT_NE(result.status().message().find(c.expected), std::string::npos)
        << result.status();
    EXPECT_NE(result.status().message().find("the baseline build"),
              std::string::npos)
        << result.status();
  }
}

// A program whose outputs vary now and then passed the baseline's three
// runs, then differed once in the candidate's: a "miscompile" whose
// pipeline was blocked for good. The difference is checked again first:
// the candidate 3 more runs, the baseline 9 more once the difference came
// and went. Runs of the first command, counted: 1-2 the baseline's, 3 the
// -O0 reference's, 4 the candidate's check, 5-7 its reruns, 8-16 the
// baseline's.
TEST_F(StageWorkloadTest, ADifferenceThatComesAndGoesIsCheckedAgainst) {
  struct Case {
    std::string flaky_runs;  // the runs that print one line more
    Verdict verdict;
    std::string detail;
  } cases[] = {
      // The baseline varies too (its 3rd rerun): the workload's fault.
      {"4|10", Verdict::kUnusable, "vary from run to run"},
      // Once, never again, the baseline steady: a rare variation, nothing
      // recorded (a pipeline blocked for good on one run was the review's
      // worry).
      {"4", Verdict::kUnusable, "not a confirmed miscompile"},
      // Twice in the candidate's 4 runs, never in the baseline's 12: the
      // candidate's (a pipeline bringing in nondeterminism is blamed).
      {"4|6", Verdict::kMiscompile, "on 2 of its 4 runs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flaky_runs);
    const std::string count = testing::MakeTempDir() + "/runs";
    options_.work_dir = testing::MakeTempDir();
    workload_.runs[0].command = absl::StrCat(
        "n=$(cat ", count, " 2>/dev/null || echo 0); n=$((n + 1)); echo $n > ",
        count, "; ./wordfreq data/words.txt; case $n in ", c.flaky_runs,
        ") echo flaky;; esac");
    absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
    ASSERT_TRUE(result.ok()) << result.status() << log_.str();
    EXPECT_EQ(result->verdict, c.verdict) << result->detail;
    EXPECT_NE(result->detail.find(c.detail), std::string::npos)
        << result->detail;
    EXPECT_EQ(result->unconfirmed, c.flaky_runs == "4");
  }
}

// A candidate right in its check and wrong afterwards (a nondeterministic
// miscompile) was timed and could become a reward: every timed pass's
// outputs are compared too, and the difference is judged as the check's.
TEST_F(StageWorkloadTest, ACandidateWrongOnlyAfterItsCheckIsCaughtWhileTimed) {
  const std::string count = testing::MakeTempDir() + "/runs";
  // Runs 1-3: the baseline twice and the -O0 reference; 4: the candidate's
  // check. Only the candidate's build (-DFLAKY) goes wrong, from run 5 on.
  workload_.build.command =
      "make wordfreq && { echo \"$CFLAGS\" | grep -o FLAKY > cflags.txt || "
      "true; }";
  workload_.build.artifacts = {"wordfreq", "cflags.txt"};
  workload_.runs[0].command = absl::StrCat(
      "n=$(cat ", count, " 2>/dev/null || echo 0); n=$((n + 1)); echo $n > ",
      count,
      "; ./wordfreq data/words.txt; if grep -q FLAKY cflags.txt && "
      "[ $n -gt 4 ]; then echo flaky; fi");
  options_.candidate_cflags = "-DFLAKY";
  absl::StatusOr<StageResult> result = Stage("baseline");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, Verdict::kMiscompile) << result->detail;
  EXPECT_FALSE(result->timing.has_value());  // no speed figure
  EXPECT_NE(log_.str().find("outputs differed during timing"),
            std::string::npos)
      << log_.str();
  EXPECT_EQ(result->cause, "build_flags");
}

// Undefined behaviour a UBSan build showed is the program's: the workload
// is unusable (exit 2, not 3's "miscompile found"), and the record kept
// says undefined_behaviour, which blocks nothing.
TEST(StageRecordsTest, UndefinedBehaviourIsRecordedAsTheProgramsOwn) {
  StageResult result;
  result.workload = "w";
  result.verdict = Verdict::kUnusable;
  result.cause = "undefined_behaviour";
  result.mismatch_run = "run[0]";
  result.blamed = {{"m1", "default<O3>"}};
  StageRecords records = RecordsOf(result);
  ASSERT_TRUE(records.miscompile.has_value());
  EXPECT_EQ(records.miscompile->verdict(), "undefined_behaviour");
  EXPECT_TRUE(records.rewards.empty());
  result.cause.clear();  // unusable for any other reason: nothing recorded
  EXPECT_TRUE(RecordsOf(result).empty());
}

// A build flag the wrapper leaves to clang (-ffast-math is too hard for it)
// is measured as it is: the candidate is clang with the flag. The check
// that the wrapper reached the program refused it (the review).
TEST_F(StageWorkloadTest, ABuildFlagTheWrapperLeavesToClangIsStillStaged) {
  options_.candidate_cflags = "-ffast-math";
  absl::StatusOr<StageResult> result = Stage("baseline");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_TRUE(result->verdict == Verdict::kMeasured ||
              result->verdict == Verdict::kIdentical)
      << VerdictName(result->verdict) << ": " << result->detail;
}

TEST_F(StageWorkloadTest, AWrongExitStatusOfTheBaselineIsNotACandidateFault) {
  workload_.runs[1].check.exit_status = 1;  // wordfreq exits 0
  absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, Verdict::kUnusable) << result->detail;
}

TEST_F(StageWorkloadTest, AnInjectedMiscompileIsCaughtBeforeTimingAndBlamed) {
  // The test-only wrapper links phaseloop-test-miscompile, which turns one
  // add in a loop into a sub; the product's wrapper refuses that pass.
  absl::StatusOr<runner::Compilers> test_wrapper = runner::RunfilesCompilers(
      "compiler_driver/testing/miscompile/phaseloop-cc");
  ASSERT_TRUE(test_wrapper.ok()) << test_wrapper.status();
  options_.compilers = *test_wrapper;
  options_.ubsan = true;
  absl::StatusOr<StageResult> result =
      Stage("fixed:default<O3>,phaseloop-test-miscompile");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_EQ(result->verdict, Verdict::kMiscompile) << result->detail;
  EXPECT_FALSE(result->timing.has_value());
  ASSERT_TRUE(result->mismatch.has_value());
  EXPECT_EQ(result->mismatch->what, "stdout");
  EXPECT_EQ(result->cause, "miscompile");  // the UBSan build agrees
  ASSERT_EQ(result->blamed.size(), 1u);
  EXPECT_EQ(result->blamed[0].second, "default<O3>,phaseloop-test-miscompile");
  EXPECT_EQ(log_.str().find("timing:"), std::string::npos);

  StageRecords records = RecordsOf(*result);
  EXPECT_TRUE(records.rewards.empty());
  ASSERT_TRUE(records.miscompile.has_value());
  EXPECT_EQ(records.miscompile->workload(), "example");
  EXPECT_EQ(records.miscompile->build_id(), result->candidate.build_id);
  EXPECT_EQ(records.miscompile->verdict(), "miscompile");
  ASSERT_EQ(records.miscompile->blamed_size(), 1);
  EXPECT_EQ(records.miscompile->blamed(0).module_hash(),
            result->blamed[0].first);
}

// A test-only llvm-bolt: instruments as the real one does, and "optimises"
// into a program that prints something else (a faulty rewrite).
std::string FaultyBolt(const std::string& dir) {
  const std::string path = dir + "/faulty-llvm-bolt";
  std::ofstream(path) << "#!/bin/sh\n"
                         "case \" $* \" in *\" -instrument \"*) exec "
                      << profiling::BoltOptions{}.llvm_bolt
                      << " \"$@\";; esac\n"
                         "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; "
                         "shift; done\n"
                         "printf '#!/bin/sh\\necho not what it printed\\n' "
                         "> \"$out\"\n"
                         "chmod +x \"$out\"\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

TEST_F(StageWorkloadTest, BoltRewritesTheCandidateWhichIsCheckedAndTimed) {
  options_.link_flags = {profiling::kBoltLinkFlag};
  options_.bolt = profiling::BoltOptions{};
  absl::StatusOr<StageResult> result = Stage("baseline");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  EXPECT_EQ(result->verdict, Verdict::kMeasured) << result->detail;
  ASSERT_TRUE(result->bolt.has_value());
  EXPECT_EQ(result->candidate.artifacts_hash, result->bolt->artifacts_hash);
  EXPECT_NE(result->candidate.artifacts_hash, result->baseline.artifacts_hash);
  // Before BOLT the candidate was the baseline's program.
  EXPECT_EQ(result->bolt->built_artifacts_hash,
            result->baseline.artifacts_hash);
  // Its figures belong to no pipeline: nothing for the buffer.
  StageRecords records = RecordsOf(*result);
  EXPECT_TRUE(records.rewards.empty());
  EXPECT_TRUE(records.decisions.empty());
}

// A faulty rewrite is caught before timing and blamed on BOLT: the build
// before it gives the baseline's outputs, so no pipeline is blamed.
TEST_F(StageWorkloadTest, ARewriteThatChangesTheOutputsIsBlamedOnBolt) {
  options_.link_flags = {profiling::kBoltLinkFlag};
  options_.bolt = profiling::BoltOptions{};
  options_.bolt->llvm_bolt = FaultyBolt(testing::MakeTempDir());
  absl::StatusOr<StageResult> result = Stage("fixed:default<O1>");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_EQ(result->verdict, Verdict::kMiscompile) << result->detail;
  EXPECT_EQ(result->cause, "bolt");
  EXPECT_TRUE(result->blamed.empty());
  EXPECT_FALSE(result->timing.has_value());
  EXPECT_NE(log_.str().find("check: the build before BOLT"), std::string::npos);
  EXPECT_FALSE(RecordsOf(*result).miscompile.has_value());
}

// The policy's miscompile under a (correct) BOLT: the build before BOLT
// differs too, so the pipeline is blamed, not BOLT.
TEST_F(StageWorkloadTest, APipelineMiscompileUnderBoltIsBlamedOnThePipeline) {
  absl::StatusOr<runner::Compilers> test_wrapper = runner::RunfilesCompilers(
      "compiler_driver/testing/miscompile/phaseloop-cc");
  ASSERT_TRUE(test_wrapper.ok()) << test_wrapper.status();
  options_.compilers = *test_wrapper;
  options_.link_flags = {profiling::kBoltLinkFlag};
  options_.bolt = profiling::BoltOptions{};
  absl::StatusOr<StageResult> result =
      Stage("fixed:default<O3>,phaseloop-test-miscompile");
  ASSERT_TRUE(result.ok()) << result.status() << log_.str();
  ASSERT_EQ(result->verdict, Verdict::kMiscompile) << result->detail;
  EXPECT_EQ(result->cause, "unknown");  // no UBSan build asked for
  ASSERT_EQ(result->blamed.size(), 1u);
  EXPECT_EQ(result->blamed[0].second, "default<O3>,phaseloop-test-miscompile");
}

}  // namespace
}  // namespace phaseloop::staging
