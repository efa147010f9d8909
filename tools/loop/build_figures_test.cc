#include "tools/loop/build_figures.h"

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::loop {
namespace {

TEST(BuildFiguresTest, SumsOneBuildsDecisions) {
  const std::string buffer = testing::MakeTempDir() + "/buffer.db";
  {
    auto store = replay_buffer::OpenReplayStore(buffer);
    ASSERT_TRUE(store.ok()) << store.status();
    replay_buffer::WriteBatch batch;
    for (const auto& [id, build, pipeline] :
         {std::tuple{"d1", "b1", "default<O3>"},
          std::tuple{"d2", "b1", "default<O2>,default<O3>"},
          std::tuple{"d3", "b2", "default<O3>"}}) {
      v1::Decision d = replay_buffer::test_records::MakeDecision(id, id, build);
      d.set_pipeline(pipeline);
      d.set_alloc_size(1000);
      d.set_compile_time_us(2000);
      d.set_policy_time_us(30);
      batch.decisions.push_back(d);
    }
    v1::Decision plain =
        replay_buffer::test_records::MakeDecision("d4", "m4", "b1");
    plain.set_outcome(v1::PASS_THROUGH);  // plain clang: time, no object
    plain.set_compile_time_us(500);
    batch.decisions.push_back(plain);
    ASSERT_TRUE((*store)->Write(batch).ok());
  }
  auto figures = ReadBuildFigures(buffer, "b1");
  ASSERT_TRUE(figures.ok()) << figures.status();
  EXPECT_EQ(figures->build_id(), "b1");
  EXPECT_EQ(figures->modules(), 2);
  EXPECT_EQ(figures->modules_changed(), 1);
  EXPECT_EQ(figures->alloc_size(), 2000);
  EXPECT_EQ(figures->compile_time_us(), 4500);
  EXPECT_EQ(figures->policy_time_us(), 60);
  EXPECT_EQ(ReadBuildFigures(buffer, "nope").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace phaseloop::loop
