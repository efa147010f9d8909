#include "reward_engine/engine/engine_checkpoint.h"

#include <gtest/gtest.h>

#include "common/kafka/test_util.h"

namespace phaseloop::reward_engine {
namespace {

TEST(EngineCheckpointTest, RoundTripsWithTheRowsAndOnlyMovesForward) {
  auto store =
      replay_buffer::OpenReplayStore(kafka::testing::MakeTempDir() + "/b.db");
  ASSERT_TRUE(store.ok()) << store.status();
  std::map<int32_t, PartitionCheckpoint> checkpoints = {
      {0, {5, 9, 120000}},
      {3, {7, 7, kNoTime}},
  };
  replay_buffer::WriteBatch batch;
  batch.offsets = CheckpointOffsets("g", "phaseloop.sli", checkpoints);
  v1::FinalReward reward;
  reward.set_reward_id("r1");
  reward.set_source("canary");
  batch.rewards.push_back(reward);
  ASSERT_TRUE((*store)->Write(batch).ok());
  auto read = ReadCheckpoints(**store, "g", "phaseloop.sli");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, checkpoints);
  // The plain offsets are what any consumer of the topic would resume from.
  auto plain = (*store)->ReadOffsets("g", "phaseloop.sli");
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(plain->size(), 2u);
  EXPECT_EQ((*plain)[0].next_offset, 5);
  // Other groups see nothing; an older checkpoint does not rewind.
  EXPECT_TRUE(ReadCheckpoints(**store, "other", "phaseloop.sli")->empty());
  replay_buffer::WriteBatch older;
  older.offsets = CheckpointOffsets("g", "phaseloop.sli", {{0, {4, 8, 60000}}});
  ASSERT_TRUE((*store)->Write(older).ok());
  EXPECT_EQ(ReadCheckpoints(**store, "g", "phaseloop.sli")->at(0),
            (PartitionCheckpoint{5, 9, 120000}));
}

}  // namespace
}  // namespace phaseloop::reward_engine
