#include "offline_rl/candidates/candidate_mining.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/testing/test_util.h"
#include "compiler_driver/passes/action_space.h"
#include "gtest/gtest.h"
#include "offline_rl/candidates/candidates_command.h"
#include "offline_rl/learner/dataset.h"
#include "replay_buffer/replay_store.h"
#include "staging_harness/corpus/fixture_corpus.h"
#include "staging_harness/search/best_sequences.h"
#include "staging_harness/variants/corpus_variants.h"

namespace phaseloop::candidates {
namespace {

namespace fs = std::filesystem;

class CandidateMiningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    base_ = fs::path(tmp != nullptr ? tmp : "/tmp") / "mine";
    auto built = corpus::BuildFixtureCorpus(base_.string(),
                                            {"sorting", "bits", "recursion"});
    ASSERT_TRUE(built.ok()) << built.status();
    corpus_ = (base_ / "corpus").string();
    for (const auto& r : built->modules) hashes_.push_back(r.module_hash());

    const auto& space = passes::ActionSpace::Llvm16();
    a_ = {*space.Find("mem2reg"), *space.Find("instcombine"),
          *space.Find("simplifycfg")};
    b_ = {*space.Find("sroa"), *space.Find("gvn")};
    // File: a_ is best for two modules, b_ for one; an ir_count entry is
    // ignored for an alloc_size (the default) mining.
    std::vector<search::KnownBest> known(4);
    for (int i = 0; i < 4; ++i) {
      known[i].best.set_module_hash(hashes_[i % 3]);
      known[i].best.set_objective(i == 3 ? "ir_count" : "alloc_size");
      known[i].best.set_action_space_version(space.version());
      for (int a : (i == 2 ? b_ : a_)) known[i].best.add_actions(a);
      known[i].best.set_value(100);
    }
    best_file_ = (base_ / "best.json").string();
    ASSERT_TRUE(search::WriteBestSequences(best_file_, known).ok());
    buffer_ = (base_ / "buffer.db").string();
    auto store = replay_buffer::OpenReplayStore(buffer_);
    ASSERT_TRUE(store.ok()) << store.status();
  }

  MineOptions Options() {
    MineOptions o;
    o.best_files = {best_file_};
    o.buffer = buffer_;
    o.corpus_dir = corpus_;
    o.split = "";
    o.threads = 2;
    o.oz_prefix_variants = true;
    o.out = (base_ / "candidates.json").string();
    return o;
  }

  fs::path base_;
  std::string corpus_, best_file_, buffer_;
  std::vector<std::string> hashes_;
  std::vector<int> a_, b_;
};

TEST_F(CandidateMiningTest, CollectsDedupedRankedCandidatesWithOzFirst) {
  auto candidates = CollectCandidates(Options());
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  ASSERT_EQ(candidates->size(), 5u);  // oz, c000, c000+oz, c001, c001+oz
  EXPECT_EQ((*candidates)[0].name, "oz");
  EXPECT_EQ((*candidates)[0].pipeline, "default<Oz>");
  EXPECT_EQ((*candidates)[1].name, "c000");
  EXPECT_EQ((*candidates)[1].best_for_modules, 2);
  EXPECT_EQ((*candidates)[1].actions,
            std::vector<int32_t>(a_.begin(), a_.end()));
  EXPECT_EQ((*candidates)[1].pipeline,
            "function(mem2reg),function(instcombine),function(simplifycfg)");
  EXPECT_EQ((*candidates)[2].name, "c000+oz");
  EXPECT_EQ((*candidates)[2].pipeline,
            "default<Oz>,function(mem2reg),function(instcombine),"
            "function(simplifycfg)");
  EXPECT_EQ((*candidates)[3].best_for_modules, 1);
  MineOptions one = Options();
  one.max_candidates = 1;
  one.oz_prefix_variants = false;
  EXPECT_EQ(CollectCandidates(one)->size(), 2u);
}

// The review: every buffer sequence was ranked, so a mining for the train
// split took the test modules' best sequences as its candidates.
TEST_F(CandidateMiningTest, OnlyTheSplitsOwnModulesChooseCandidates) {
  auto records = staging::ReadCorpusRecords(corpus_, "");
  ASSERT_TRUE(records.ok()) << records.status();
  std::map<std::string, std::string> split_of;
  for (const v1::ModuleRecord& r : *records) {
    split_of[r.module_hash()] = r.split();
  }
  // The three modules are not all of one split (else nothing is checked).
  ASSERT_FALSE(split_of[hashes_[0]] == split_of[hashes_[1]] &&
               split_of[hashes_[1]] == split_of[hashes_[2]]);
  for (const std::string split : {"train", "validation", "test"}) {
    MineOptions o = Options();
    o.split = split;
    o.oz_prefix_variants = false;
    auto candidates = CollectCandidates(o);
    // The file's alloc_size entries: a_ best on modules 0 and 1, b_ on 2.
    int expected = 0, counted = 0;
    for (int i = 0; i < 3; ++i) expected += split_of[hashes_[i]] == split;
    if (expected == 0) {  // nothing to mine there: said, not -Oz alone
      EXPECT_TRUE(absl::IsInvalidArgument(candidates.status())) << split;
      EXPECT_NE(candidates.status().message().find("no best sequence"),
                std::string::npos)
          << candidates.status();
      continue;
    }
    ASSERT_TRUE(candidates.ok()) << candidates.status();
    for (const Candidate& c : *candidates) counted += c.best_for_modules;
    EXPECT_EQ(counted, expected) << split;
  }
}

// The review: search explores every action, lower-constant-intrinsics
// too; a best sequence running it became a candidate, and training failed
// at the very end (the exported artifact was refused).
TEST_F(CandidateMiningTest, SequencesNoPolicyMayRunAreLeftOutAndCounted) {
  const auto& space = passes::ActionSpace::Llvm16();
  std::vector<search::KnownBest> known(2);
  for (int i = 0; i < 2; ++i) {
    known[i].best.set_module_hash(hashes_[i]);
    known[i].best.set_objective("alloc_size");
    known[i].best.set_action_space_version(space.version());
    known[i].best.set_value(100);
  }
  known[0].best.add_actions(*space.Find("lower-constant-intrinsics"));
  known[0].best.add_actions(*space.Find("instcombine"));
  known[1].best.add_actions(*space.Find("instcombine"));
  const std::string best = (base_ / "refused_best.json").string();
  ASSERT_TRUE(search::WriteBestSequences(best, known).ok());
  MineOptions options = Options();
  options.best_files = {best};
  options.buffer.clear();
  options.oz_prefix_variants = false;
  int refused = 0;
  auto candidates = CollectCandidates(options, &refused);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  EXPECT_EQ(refused, 1);
  ASSERT_EQ(candidates->size(), 2u);  // oz and instcombine
  EXPECT_EQ((*candidates)[1].pipeline, "function(instcombine)");
}

TEST_F(CandidateMiningTest, BlockedPairsDoNotCountAsBest) {
  // A miscompile blamed a_'s pipeline on the first module: a_ is best for
  // one module now, like b_, and the shorter b_ ranks first. (A buffer of
  // its own: the fixture's is shared by the tests.)
  const std::string buffer = (base_ / "blocked.db").string();
  fs::remove(buffer);
  {
    auto store = replay_buffer::OpenReplayStore(buffer);
    ASSERT_TRUE(store.ok()) << store.status();
    v1::Miscompile m;
    m.set_workload("w");
    m.set_run("run[0]");
    m.set_verdict(replay_buffer::kVerdictMiscompile);
    v1::BlamedPipeline* blamed = m.add_blamed();
    blamed->set_module_hash(hashes_[0]);
    blamed->set_pipeline(
        "function(mem2reg),function(instcombine),function(simplifycfg)");
    ASSERT_TRUE((*store)->AddMiscompile(m).ok());
  }
  MineOptions options = Options();
  options.buffer = buffer;
  options.oz_prefix_variants = false;
  auto candidates = CollectCandidates(options);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  ASSERT_EQ(candidates->size(), 3u);  // oz, c000, c001
  EXPECT_EQ((*candidates)[1].actions,
            std::vector<int32_t>(b_.begin(), b_.end()));
  EXPECT_EQ((*candidates)[2].actions,
            std::vector<int32_t>(a_.begin(), a_.end()));
  EXPECT_EQ((*candidates)[2].best_for_modules, 1);
}

// The best fixed pipelines are always candidates, right after -Oz, and get
// the codegen variants like the rest; a pipeline a policy may not carry, or
// a name given twice, is refused before anything is measured.
TEST_F(CandidateMiningTest, FixedCandidatesFollowOzAndAreChecked) {
  MineOptions options = Options();
  options.fixed_candidates = {{"ozmf", "tuned<Oz;merge-functions>"}};
  options.codegen_variants.machine_outliner = true;
  auto candidates = CollectCandidates(options);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  ASSERT_EQ(candidates->size(), 12u);  // oz, ozmf, five mined; then "+mo"
  EXPECT_EQ((*candidates)[1].name, "ozmf");
  EXPECT_EQ((*candidates)[1].pipeline, "tuned<Oz;merge-functions>");
  EXPECT_TRUE((*candidates)[1].actions.empty());
  EXPECT_EQ((*candidates)[7].name, "ozmf+mo");
  EXPECT_EQ((*candidates)[7].pipeline,
            "tuned<Oz;merge-functions>,codegen<machine-outliner>");

  for (const MineOptions::FixedCandidate& bad :
       std::vector<MineOptions::FixedCandidate>{{"x", "internalize"},
                                                {"x", "tuned<Oz;bogus>"},
                                                {"oz", "default<Os>"},
                                                {"c000", "default<Os>"},
                                                {"x", ""}}) {
    options.fixed_candidates = {bad};
    auto refused = CollectCandidates(options);
    ASSERT_FALSE(refused.ok()) << bad.pipeline;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("fixed candidate"),
              std::string::npos)
        << refused.status();
  }
}

TEST_F(CandidateMiningTest, CodegenVariantsAreNamedByTheirOptions) {
  MineOptions options = Options();
  options.codegen_variants.no_jump_tables = true;
  auto tables = CollectCandidates(options);
  ASSERT_TRUE(tables.ok()) << tables.status();
  ASSERT_EQ(tables->size(), 10u);  // the five IR-only ones, then "+njt"
  EXPECT_EQ((*tables)[5].name, "oz+njt");
  EXPECT_EQ((*tables)[5].pipeline, "default<Oz>,codegen<no-jump-tables>");

  options.codegen_variants.machine_outliner = true;
  auto both = CollectCandidates(options);
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->size(), 10u);
  EXPECT_EQ((*both)[5].name, "oz+mo+njt");
  EXPECT_EQ((*both)[5].pipeline,
            "default<Oz>,codegen<machine-outliner;no-jump-tables>");
  EXPECT_NE(CandidateSetVersion(*both), CandidateSetVersion(*tables));

  // Every option has its own suffix: names stay unique.
  MineOptions split = Options();
  split.codegen_variants.split_functions = true;
  auto split_candidates = CollectCandidates(split);
  ASSERT_TRUE(split_candidates.ok()) << split_candidates.status();
  ASSERT_EQ(split_candidates->size(), 10u);
  EXPECT_EQ((*split_candidates)[5].name, "oz+sf");
  EXPECT_EQ((*split_candidates)[5].pipeline,
            "default<Oz>,codegen<split-functions>");
}

TEST_F(CandidateMiningTest, CodegenVariantsTryEveryCandidateWithTheOutliner) {
  MineOptions options = Options();
  options.codegen_variants.machine_outliner = true;
  auto candidates = CollectCandidates(options);
  ASSERT_TRUE(candidates.ok()) << candidates.status();
  ASSERT_EQ(candidates->size(), 10u);  // the five IR-only ones, then "+mo"
  EXPECT_EQ((*candidates)[5].name, "oz+mo");
  EXPECT_EQ((*candidates)[5].pipeline, "default<Oz>,codegen<machine-outliner>");
  EXPECT_EQ((*candidates)[7].name, "c000+oz+mo");
  EXPECT_EQ((*candidates)[7].actions, (*candidates)[2].actions);
  EXPECT_NE(CandidateSetVersion(*candidates),
            CandidateSetVersion(*CollectCandidates(Options())));

  // Measured for real: on interpreter.c the outliner shrinks -Oz's .text.
  auto built =
      corpus::BuildFixtureCorpus((base_ / "mo").string(), {"interpreter"});
  ASSERT_TRUE(built.ok()) << built.status();
  options.corpus_dir = (base_ / "mo" / "corpus").string();
  options.buffer = (base_ / "mo" / "buffer.db").string();
  ASSERT_TRUE(replay_buffer::OpenReplayStore(options.buffer).ok());
  options.max_candidates = 0;  // oz and oz+mo
  auto report = MineCandidates(options);
  ASSERT_TRUE(report.ok()) << report.status();
  auto store = replay_buffer::OpenReplayStore(options.buffer);
  ASSERT_TRUE(store.ok());
  auto keys = (*store)->ListEpisodes({});
  ASSERT_TRUE(keys.ok());
  std::vector<std::string> ids;
  for (const auto& k : *keys) ids.push_back(k.episode_id);
  auto episodes = (*store)->ReadEpisodes(ids);
  ASSERT_TRUE(episodes.ok()) << episodes.status();
  std::map<std::string, int64_t> text, alloc;
  for (const v1::Episode& e : *episodes) {
    text[e.behaviour_policy()] = e.final_text_size();
    alloc[e.behaviour_policy()] = e.final_alloc_size();
  }
  ASSERT_EQ(text.count("candidate:oz"), 1u);
  ASSERT_EQ(text.count("candidate:oz+mo"), 1u);
  EXPECT_LT(text["candidate:oz+mo"], text["candidate:oz"]);
  // Both whole objects are measured: on this module the outliner's object
  // was 12 bytes larger in total (1212 vs 1200) while its .text shrank,
  // which is why the size objective is the whole object.
  EXPECT_GT(alloc["candidate:oz"], text["candidate:oz"]);
  EXPECT_GT(alloc["candidate:oz+mo"], text["candidate:oz+mo"]);
  EXPECT_GT(alloc["candidate:oz+mo"], alloc["candidate:oz"]);

  std::ostringstream out, err;
  MineFlags flags;
  flags.options = Options();
  flags.codegen_variants = "fast-isel";
  EXPECT_EQ(RunMine(flags, out, err), 2);
  EXPECT_NE(err.str().find("unknown codegen option 'fast-isel'"),
            std::string::npos)
      << err.str();
}

TEST_F(CandidateMiningTest, MeasuresEveryCandidateAndStoresEpisodes) {
  auto report = MineCandidates(Options());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->modules, 3);
  EXPECT_EQ(report->episodes_written, 15);
  auto store = replay_buffer::OpenReplayStore(buffer_);
  ASSERT_TRUE(store.ok());
  replay_buffer::EpisodeFilter filter;
  filter.objective = "alloc_size";
  auto keys = (*store)->ListEpisodes(filter);
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 15u);
  std::vector<std::string> ids;
  for (const auto& k : *keys) ids.push_back(k.episode_id);
  auto episodes = (*store)->ReadEpisodes(ids);
  ASSERT_TRUE(episodes.ok());
  std::map<std::string, int64_t> oz_alloc;  // module -> -Oz's whole object
  for (const v1::Episode& e : *episodes) {
    if (e.behaviour_policy() == "candidate:oz") {
      oz_alloc[e.module_hash()] = e.final_alloc_size();
    }
  }
  ASSERT_EQ(oz_alloc.size(), 3u);
  for (const v1::Episode& e : *episodes) {
    ASSERT_EQ(e.steps_size(), 1);
    EXPECT_EQ(e.action_space_version(),
              CandidateSetVersion(report->candidates));
    // The learner computes it alike, to read only this set's episodes.
    std::vector<offline_rl::Candidate> as_learner_reads;
    for (const Candidate& c : report->candidates) {
      as_learner_reads.push_back({c.name, c.actions, c.pipeline});
    }
    EXPECT_EQ(e.action_space_version(),
              offline_rl::CandidateSetVersion(as_learner_reads));
    const v1::Step& s = e.steps(0);
    EXPECT_EQ(s.autophase_size(), 56);
    EXPECT_EQ(s.inst_count_size(), 70);
    // Both sizes are recorded; the objective is the whole object.
    EXPECT_EQ(s.text_size_after(), e.final_text_size());
    EXPECT_EQ(s.alloc_size_after(), e.final_alloc_size());
    EXPECT_GT(e.final_alloc_size(), e.final_text_size());
    if (e.behaviour_policy() == "candidate:oz") {
      EXPECT_DOUBLE_EQ(s.reward(), 1.0);  // -Oz's own reduction
      EXPECT_EQ(s.action(), 0);
    } else {
      // reward = (start - A) / (start - A_Oz), so reward - 1 is
      // (A_Oz - A) / (start - A_Oz): its sign says better/worse than -Oz.
      const int64_t oz = oz_alloc[e.module_hash()];
      if (e.final_alloc_size() < oz) {
        EXPECT_GT(s.reward(), 1.0);
      } else if (e.final_alloc_size() > oz) {
        EXPECT_LT(s.reward(), 1.0);
      } else {
        EXPECT_DOUBLE_EQ(s.reward(), 1.0);
      }
    }
  }
  // Rerunning replaces the same episodes (deterministic ids).
  ASSERT_TRUE(MineCandidates(Options()).ok());
  EXPECT_EQ((*store)->ListEpisodes(filter)->size(), 15u);

  auto file = ReadCandidatesFile(Options().out);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->size(), 5u);
  EXPECT_EQ((*file)[0].name, "oz");
  EXPECT_DOUBLE_EQ((*file)[0].mean_reward, 1.0);
  EXPECT_EQ((*file)[0].better_than_oz + (*file)[0].worse_than_oz, 0);
}

TEST_F(CandidateMiningTest, MaxIrCountLeavesOutLargerModules) {
  MineOptions options = Options();
  options.write_episodes = false;
  options.max_ir_count = 1 << 30;
  auto all = MineCandidates(options);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->modules, 3);
  options.max_ir_count = 1;  // every fixture is larger
  auto none = MineCandidates(options);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  options.max_ir_count = 0;
  auto records = staging::ReadCorpusRecords(corpus_, "");
  ASSERT_TRUE(records.ok()) << records.status();
  options.exclude = {(*records)[0].name()};
  auto one_less = MineCandidates(options);
  ASSERT_TRUE(one_less.ok()) << one_less.status();
  EXPECT_EQ(one_less->modules, 2);
}

// A module whose candidates hang (here: an injected hang in the child) is
// killed at the time limit and counted failed; the run goes on and finishes.
TEST_F(CandidateMiningTest, AHangingModuleIsSkippedNotTheRun) {
  MineOptions options = Options();
  options.write_episodes = false;
  options.module_timeout_s = 1;
  setenv("PHASELOOP_TEST_INJECT_FAULT", "hang", 1);
  auto report = MineCandidates(options);
  unsetenv("PHASELOOP_TEST_INJECT_FAULT");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->modules, 0);
  EXPECT_EQ(report->failed_modules, 3);
}

TEST_F(CandidateMiningTest, CommandRejectsBadInput) {
  std::ostringstream out, err;
  MineFlags flags;
  flags.options = Options();
  flags.options.objective = "runtime";
  EXPECT_EQ(RunMine(flags, out, err), 2);
  EXPECT_NE(err.str().find("objective"), std::string::npos);
  flags.options = Options();
  flags.options.best_files = {"/no/such/best.json"};
  flags.options.buffer.clear();
  flags.no_episodes = true;
  EXPECT_EQ(RunMine(flags, out, err), 2);
  flags.options = Options();
  flags.options.corpus_dir = "/no/such/corpus";
  EXPECT_EQ(RunMine(flags, out, err), 2);
  EXPECT_FALSE(ReadCandidatesFile("/no/such/candidates.json").ok());
  // --out over what mining reads, refused before any module is measured.
  const std::string buffer_bytes = phaseloop::testing::ReadFileOrEmpty(buffer_);
  const std::string best_bytes =
      phaseloop::testing::ReadFileOrEmpty(best_file_);
  for (const std::string& over :
       {buffer_, best_file_, corpus_ + "/manifest.json", corpus_,
        std::string("")}) {
    flags.options = Options();
    flags.options.out = over;
    std::ostringstream refused;
    EXPECT_EQ(RunMine(flags, out, refused), 2) << over;
    EXPECT_NE(refused.str().find("--out"), std::string::npos) << refused.str();
  }
  EXPECT_EQ(phaseloop::testing::ReadFileOrEmpty(buffer_), buffer_bytes);
  EXPECT_EQ(phaseloop::testing::ReadFileOrEmpty(best_file_), best_bytes);
  flags.options = Options();
  flags.options.max_modules = -5;
  EXPECT_EQ(RunMine(flags, out, err), 2);
}

}  // namespace
}  // namespace phaseloop::candidates
