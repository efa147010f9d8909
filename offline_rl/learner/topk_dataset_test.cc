// A size policy's dataset with the user's own topk builds: compile decisions
// that measured candidates become rows of the candidate table
// (offline_rl/learner/topk_outcomes.h), beside the lab's mined episodes.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/test_buffers.h"

namespace phaseloop::offline_rl {
namespace {

constexpr char kOz[] = "default<Oz>";
constexpr char kC1[] = "function(instcombine),function(simplifycfg)";
constexpr char kC2[] = "function(sroa)";
constexpr char kC3[] = "function(gvn)";

class TopkDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    auto store = replay_buffer::OpenReplayStore(dir_ + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    options_ = testing::Llvm16DatasetOptions();
    // m0..m9 train, m10..m13 validation, mined for oz, c1, c2, c3.
    ASSERT_TRUE(testing::WriteCandidateBuffer(*store_, 10, 4, 7).ok());
    ASSERT_TRUE(testing::WriteCandidatesFile(dir_ + "/c.json").ok());
    auto candidates = ReadCandidatesFile(dir_ + "/c.json", options_.pass_names);
    ASSERT_TRUE(candidates.ok()) << candidates.status();
    options_.candidates = *candidates;
    config_.objective = "alloc_size";
  }

  // A topk record of `module` at -Oz measuring `measured` (pipeline,
  // bytes; -Oz first), with m0's features (shifted for another module, so
  // its state is its own).
  v1::Decision Record(
      const std::string& id, const std::string& module,
      const std::vector<std::pair<std::string, int64_t>>& measured,
      int64_t time_ms = 1000) {
    auto episodes = store_->ReadEpisodes({"m0-oz"});
    EXPECT_TRUE(episodes.ok() && episodes->size() == 1u);
    const v1::Step& s = (*episodes)[0].steps(0);
    v1::Decision d;
    d.set_decision_id(id);
    d.set_outcome(v1::OPTIMIZED);
    d.set_opt_level("Oz");
    d.set_module_hash(module);
    d.set_unix_time_ms(time_ms);
    *d.mutable_autophase() = s.autophase();
    *d.mutable_inst_count() = s.inst_count();
    d.set_inst_count(0, s.inst_count(0) + 1000);
    int64_t best = 0;
    for (const auto& [pipeline, bytes] : measured) {
      v1::MeasuredPipeline* m = d.add_topk_measured();
      m->set_pipeline(pipeline);
      m->set_value(bytes);
      if (best == 0 || bytes < best) {
        best = bytes;
        d.set_pipeline(pipeline);
      }
    }
    d.set_oz_alloc_size(measured.empty() ? 0 : measured[0].second);
    d.set_alloc_size(best);
    return d;
  }

  Dataset Build() {
    auto data = BuildDataset(*store_, config_, options_);
    EXPECT_TRUE(data.ok()) << data.status();
    return data.ok() ? *std::move(data) : Dataset();
  }

  // module_hash -> its row of candidate values (and of sizes).
  static std::map<std::string, std::vector<float>> Rows(
      const CandidateTable& t) {
    std::map<std::string, std::vector<float>> rows;
    for (size_t m = 0; m < t.module_hashes.size(); ++m) {
      rows[t.module_hashes[m]] = std::vector<float>(
          t.values.begin() + m * 4, t.values.begin() + (m + 1) * 4);
    }
    return rows;
  }
  static std::vector<double> Sizes(const CandidateTable& t,
                                   const std::string& module) {
    for (size_t m = 0; m < t.module_hashes.size(); ++m) {
      if (t.module_hashes[m] == module) {
        return std::vector<double>(t.object_sizes.begin() + m * 4,
                                   t.object_sizes.begin() + (m + 1) * 4);
      }
    }
    return {};
  }

  std::string dir_;
  std::unique_ptr<replay_buffer::ReplayStore> store_;
  DatasetOptions options_;
  LearnerConfig config_;
};

TEST_F(TopkDatasetTest, TheUsersTopkBuildsBecomeRows) {
  const Dataset before = Build();
  replay_buffer::WriteBatch batch;
  // The user's own module, measured by two builds: the one that measured
  // more candidates makes the row.
  batch.decisions.push_back(
      Record("b1/u1", "u1", {{kOz, 1000}, {kC2, 900}, {kC1, 950}}));
  batch.decisions.push_back(
      Record("b2/u1", "u1", {{kOz, 1000}, {kC1, 960}}, 2000));
  // A module the buffer keeps in validation, not mined there: its row is
  // validation's.
  v1::ModuleRecord vx;
  vx.set_module_hash("vx");
  vx.set_split("validation");
  vx.set_opt_level("Oz");
  batch.modules.push_back(vx);
  batch.decisions.push_back(
      Record("b1/vx", "vx", {{kOz, 500}, {kC3, 490}, {"function(dce)", 400}}));
  // Left out: a module the lab measured (its row stays the lab's), an
  // ir_count policy's record (values are instructions: no -Oz bytes), one
  // without features, one that measured no candidate beyond -Oz.
  batch.decisions.push_back(Record("b1/m0", "m0", {{kOz, 10}, {kC1, 5}}));
  v1::Decision ir = Record("b1/u2", "u2", {{kOz, 300}, {kC1, 200}});
  ir.clear_oz_alloc_size();
  batch.decisions.push_back(ir);
  v1::Decision bare = Record("b1/u3", "u3", {{kOz, 300}, {kC1, 200}});
  bare.clear_autophase();
  batch.decisions.push_back(bare);
  batch.decisions.push_back(
      Record("b1/u4", "u4", {{kOz, 300}, {"function(dce)", 200}}));
  // Not topk: a single-mode record (nothing measured) is no row.
  v1::Decision single = Record("b1/u5", "u5", {});
  single.clear_topk_measured();
  batch.decisions.push_back(single);
  ASSERT_TRUE(store_->Write(batch).ok());

  const Dataset data = Build();
  auto train = Rows(data.train.table);
  ASSERT_EQ(train.size(), before.train.table.module_hashes.size() + 1);
  ASSERT_EQ(train.count("u1"), 1u);
  const std::vector<float>& u1 = train["u1"];
  EXPECT_FLOAT_EQ(u1[0], 1.0f);          // -Oz
  EXPECT_FLOAT_EQ(u1[1], 1.0f + 0.05f);  // c1: 950 of 1000
  EXPECT_FLOAT_EQ(u1[2], 1.0f + 0.10f);  // c2: 900
  EXPECT_TRUE(std::isnan(u1[3]));        // c3 not measured
  const std::vector<double> sizes = Sizes(data.train.table, "u1");
  EXPECT_EQ(sizes[0], 1000);
  EXPECT_EQ(sizes[1], 950);
  EXPECT_EQ(sizes[2], 900);
  EXPECT_TRUE(std::isnan(sizes[3]));
  // The lab's row of m0 is unchanged.
  EXPECT_EQ(train["m0"], Rows(before.train.table)["m0"]);
  // u1's demonstration is its best measured candidate, c2; one more
  // demonstration and three more transitions than the lab's alone.
  EXPECT_EQ(data.train.demonstrations.size(),
            before.train.demonstrations.size() + 1);
  EXPECT_EQ(data.train.transitions.size(), before.train.transitions.size() + 3);
  int u1_row = -1;
  for (size_t m = 0; m < data.train.table.module_hashes.size(); ++m) {
    if (data.train.table.module_hashes[m] == "u1") u1_row = m;
  }
  ASSERT_GE(u1_row, 0);
  EXPECT_EQ(data.train.demonstrations.actions[u1_row], 2);

  auto validation = Rows(data.validation.table);
  ASSERT_EQ(validation.count("vx"), 1u);
  EXPECT_FLOAT_EQ(validation["vx"][3], 1.0f + 0.02f);  // c3: 490 of 500
  EXPECT_TRUE(std::isnan(validation["vx"][1]));
  EXPECT_EQ(train.count("vx"), 0u);

  EXPECT_EQ(data.train.topk_rows, 1);
  EXPECT_EQ(data.train.topk_decisions, 2);
  EXPECT_EQ(data.train.topk_skipped, 4);  // m0, u2, u3, u4
  EXPECT_EQ(data.validation.topk_rows, 1);
  EXPECT_NE(data.snapshot.find("your builds: 2 modules from 3 topk decisions"),
            std::string::npos)
      << data.snapshot;
  // The rows are in the data snapshot's digest.
  EXPECT_NE(data.snapshot.substr(0, 40), before.snapshot.substr(0, 40));

  // A text_size policy's values are .text: the records' allocated bytes are
  // not its truth, so they make no rows (and this buffer, mined for
  // alloc_size, has nothing else for it).
  config_.objective = "text_size";
  EXPECT_EQ(BuildDataset(*store_, config_, options_).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TopkDatasetTest, ABlockedPipelineIsNoCell) {
  v1::Miscompile m;
  m.set_workload("w");
  m.set_run("run[0]");
  m.set_verdict(replay_buffer::kVerdictMiscompile);
  v1::BlamedPipeline* b = m.add_blamed();
  b->set_module_hash("u1");
  b->set_pipeline(kC2);
  ASSERT_TRUE(store_->AddMiscompile(m).ok());
  replay_buffer::WriteBatch batch;
  batch.decisions.push_back(
      Record("b1/u1", "u1", {{kOz, 1000}, {kC2, 900}, {kC1, 950}}));
  ASSERT_TRUE(store_->Write(batch).ok());
  const Dataset data = Build();
  auto train = Rows(data.train.table);
  ASSERT_EQ(train.count("u1"), 1u);
  EXPECT_TRUE(std::isnan(train["u1"][2]));  // c2 blocked
  EXPECT_FLOAT_EQ(train["u1"][1], 1.05f);   // c1 is the best left
  EXPECT_GE(data.train.blocked, 1);
}

}  // namespace
}  // namespace phaseloop::offline_rl
