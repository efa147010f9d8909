// ReadDecisions: the compile decisions of a build (or policy, module, -O
// level), whole records in a stable order, so a learner can join a
// build-level reward (a canary run's, by build_id) to what that build
// compiled; ReadModules: what the buffer knows of those modules (their
// split).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

using test_records::MakeDecision;
using test_records::MakeModule;

v1::Decision Decision(const std::string& id, const std::string& module,
                      const std::string& build, const std::string& level,
                      const std::string& policy = "p1") {
  v1::Decision d = MakeDecision(id, module, build);
  d.set_opt_level(level);
  d.set_policy_version(policy);
  d.set_pipeline("default<" + level + ">");
  for (int i = 0; i < 56; ++i) d.add_autophase(i);
  for (int i = 0; i < 70; ++i) d.add_inst_count(100 + i);
  return d;
}

std::vector<std::string> Ids(const std::vector<v1::Decision>& decisions) {
  std::vector<std::string> ids;
  for (const v1::Decision& d : decisions) ids.push_back(d.decision_id());
  return ids;
}

class ReadDecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store =
        OpenReplayStore(phaseloop::testing::MakeTempDir() + "/buffer.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    WriteBatch batch;
    // Written out of order: the read orders by module, then decision id.
    batch.decisions = {Decision("d4", "mB", "build-1", "O3"),
                       Decision("d2", "mA", "build-1", "O2"),
                       Decision("d1", "mA", "build-1", "O3"),
                       Decision("d3", "mC", "build-1", "Oz"),
                       Decision("d5", "mA", "build-2", "O3", "p2"),
                       Decision("d6", "mB", "build-2", "O3", "p2")};
    ASSERT_TRUE(store_->Write(batch).ok());
  }
  std::vector<std::string> Read(const DecisionFilter& filter) {
    auto read = store_->ReadDecisions(filter);
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() ? Ids(*read) : std::vector<std::string>{"error"};
  }
  std::unique_ptr<ReplayStore> store_;
};

TEST_F(ReadDecisionsTest, ABuildsDecisionsInModuleThenIdOrder) {
  DecisionFilter filter;
  filter.build_id = "build-1";
  EXPECT_EQ(Read(filter), (std::vector<std::string>{"d1", "d2", "d4", "d3"}));
  filter.build_id = "build-2";
  EXPECT_EQ(Read(filter), (std::vector<std::string>{"d5", "d6"}));
  filter.build_id = "no-such-build";
  EXPECT_TRUE(Read(filter).empty());
  EXPECT_EQ(Read({}).size(), 6u);  // an empty filter matches everything
}

TEST_F(ReadDecisionsTest, TheRecordComesBackWhole) {
  DecisionFilter filter;
  filter.module_hash = "mB";
  filter.build_id = "build-1";
  auto read = store_->ReadDecisions(filter);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  const v1::Decision want = Decision("d4", "mB", "build-1", "O3");
  EXPECT_EQ((*read)[0].SerializeAsString(), want.SerializeAsString());
  EXPECT_EQ((*read)[0].inst_count_size(), 70);
}

TEST_F(ReadDecisionsTest, FiltersCombine) {
  DecisionFilter filter;
  filter.policy_version = "p2";
  EXPECT_EQ(Read(filter), (std::vector<std::string>{"d5", "d6"}));
  filter.module_hash = "mA";
  EXPECT_EQ(Read(filter), (std::vector<std::string>{"d5"}));
  filter = DecisionFilter();
  filter.build_id = "build-1";
  filter.opt_levels = {"O2", "O3"};
  EXPECT_EQ(Read(filter), (std::vector<std::string>{"d1", "d2", "d4"}));
  filter.opt_levels = {"O2"};
  EXPECT_EQ(Read(filter), (std::vector<std::string>{"d2"}));
  filter.opt_levels = {"Os"};
  EXPECT_TRUE(Read(filter).empty());
}

TEST_F(ReadDecisionsTest, AnUpsertedDecisionIsReadOnceAsRewritten) {
  WriteBatch batch;
  v1::Decision again = Decision("d1", "mA", "build-1", "O3");
  again.set_pipeline("default<O3>,default<O3>");
  batch.decisions = {again};
  ASSERT_TRUE(store_->Write(batch).ok());
  DecisionFilter filter;
  filter.build_id = "build-1";
  filter.module_hash = "mA";
  auto read = store_->ReadDecisions(filter);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(Ids(*read), (std::vector<std::string>{"d1", "d2"}));
  EXPECT_EQ((*read)[0].pipeline(), "default<O3>,default<O3>");
}

// ForEachDecision hands the same records in the same order, one at a time,
// and a visitor's error stops the read and comes back.
TEST_F(ReadDecisionsTest, ForEachDecisionVisitsWhatReadDecisionsReturns) {
  for (const char* build : {"build-1", "build-2", ""}) {
    DecisionFilter filter;
    filter.build_id = build;
    std::vector<std::string> visited;
    absl::Status status =
        store_->ForEachDecision(filter, [&](v1::Decision& d) -> absl::Status {
          EXPECT_EQ(d.inst_count_size(), 70);
          visited.push_back(d.decision_id());
          return absl::OkStatus();
        });
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(visited, Read(filter)) << build;
  }
  int calls = 0;
  absl::Status stopped =
      store_->ForEachDecision({}, [&](v1::Decision&) -> absl::Status {
        ++calls;
        return absl::CancelledError("enough");
      });
  EXPECT_EQ(stopped.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);
}

TEST_F(ReadDecisionsTest, ReadModulesKnownOnesInHashOrderOnce) {
  WriteBatch batch;
  batch.modules = {MakeModule("mB", "test"), MakeModule("mA", "train")};
  ASSERT_TRUE(store_->Write(batch).ok());
  auto modules = store_->ReadModules({"mC", "mB", "mA", "mB", "unknown"});
  ASSERT_TRUE(modules.ok()) << modules.status();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[0].module_hash(), "mA");
  EXPECT_EQ((*modules)[0].split(), "train");
  EXPECT_EQ((*modules)[1].module_hash(), "mB");
  EXPECT_EQ((*modules)[1].split(), "test");
  auto none = store_->ReadModules({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace phaseloop::replay_buffer
