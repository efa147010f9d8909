#include "common/files/proto_state_store.h"

#include "common/files/atomic_file.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "phaseloop/v1/loop.pb.h"

namespace phaseloop::files {
namespace {

// Any message with a string id and created_ms serves; the loop's is one.
using Store = ProtoStateStore<v1::LoopRun, &v1::LoopRun::loop_id>;

StateKind TestKind() {
  StateKind kind;
  kind.dir = "things";
  kind.id_name = "thing id";
  kind.owner = "the thing's directory";
  kind.noun = "thing";
  kind.state_noun = "thing state";
  kind.fresh_start = "start again under a new --thing-id";
  return kind;
}

v1::LoopRun StateOf(const std::string& id, int64_t created_ms) {
  v1::LoopRun run;
  run.set_loop_id(id);
  run.set_created_ms(created_ms);
  return run;
}

TEST(ProtoStateStoreTest, SavesLoadsAndListsNewestFirst) {
  const std::string dir = testing::MakeTempDir();
  const Store store(dir, TestKind());
  EXPECT_EQ(store.StatePath("a"), dir + "/things/a/state.json");
  ASSERT_TRUE(store.Save(StateOf("old", 1)).ok());
  ASSERT_TRUE(store.Save(StateOf("b-new", 5)).ok());
  ASSERT_TRUE(store.Save(StateOf("a-new", 5)).ok());
  auto loaded = store.Load("old");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->created_ms(), 1);
  auto listed = store.List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 3u);
  // Newest first; the same time by id.
  EXPECT_EQ((*listed)[0].loop_id(), "a-new");
  EXPECT_EQ((*listed)[1].loop_id(), "b-new");
  EXPECT_EQ((*listed)[2].loop_id(), "old");
  // A directory without a state yet (being made) is not listed.
  ASSERT_TRUE(MakeDirectories(store.Dir("empty")).ok());
  EXPECT_EQ(store.List()->size(), 3u);
}

TEST(ProtoStateStoreTest, TextThatIsNotUtf8IsSavedEscapedPathsAreRefused) {
  // Protobuf's JSON printer would drop the byte.
  const std::string dir = testing::MakeTempDir();
  const Store store(dir, TestKind());
  v1::LoopRun run = StateOf("latin", 1);
  run.add_iterations()->add_gate_lines("gate: caf\xe9 is slower");
  ASSERT_TRUE(store.Save(run).ok());
  auto loaded = store.Load("latin");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->iterations(0).gate_lines(0), "gate: caf\\xe9 is slower");
  EXPECT_EQ(run.iterations(0).gate_lines(0), "gate: caf\xe9 is slower");
  // A path a state starts with is refused before the first save: escaped,
  // it would name another file.
  v1::LoopRun started = StateOf("new", 1);
  EXPECT_TRUE(CheckStartsInUtf8(started, TestKind()).ok());
  started.set_buffer_path("/data/caf\xe9/b.db");
  absl::Status refused = CheckStartsInUtf8(started, TestKind());
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("the thing's buffer_path is not UTF-8"),
            std::string::npos)
      << refused;
}

TEST(ProtoStateStoreTest, RefusalsNameTheIdTheFileAndTheWayOut) {
  const std::string dir = testing::MakeTempDir();
  const Store store(dir, TestKind());
  auto missing = store.Load("none");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no thing 'none' (" + dir +
                                            "/things/none/state.json)"),
            std::string::npos)
      << missing.status();
  absl::Status bad_id = store.Save(StateOf("../escape", 1));
  EXPECT_EQ(bad_id.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_id.message().find("thing id"), std::string::npos) << bad_id;
  ASSERT_TRUE(MakeDirectories(store.Dir("damaged")).ok());
  ASSERT_TRUE(
      WriteFileAtomically(store.StatePath("damaged"), "{not json").ok());
  auto damaged = store.Load("damaged");
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(damaged.status().message().find(
                "damaged/state.json: not a thing state ("),
            std::string::npos)
      << damaged.status();
  EXPECT_NE(damaged.status().message().find(
                "move it aside and start again under a new --thing-id"),
            std::string::npos)
      << damaged.status();
  // A damaged state stops the listing, named, rather than being skipped;
  // asked for, the others are listed and it is named apart.
  auto listed = store.List();
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kDataLoss);
  ASSERT_TRUE(store.Save(StateOf("fine", 1)).ok());
  std::vector<absl::Status> unlisted;
  auto rest = store.List(&unlisted);
  ASSERT_TRUE(rest.ok()) << rest.status();
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].loop_id(), "fine");
  ASSERT_EQ(unlisted.size(), 1u);
  EXPECT_NE(unlisted[0].message().find("damaged/state.json"), std::string::npos)
      << unlisted[0];
  // A state naming another id than its directory's (empty, or "../..")
  // had reports written where that id pointed: refused, naming both.
  for (const std::string& other : {std::string(), std::string("../..")}) {
    ASSERT_TRUE(MakeDirectories(store.Dir("moved")).ok());
    ASSERT_TRUE(WriteFileAtomically(store.StatePath("moved"),
                                    "{\"loopId\": \"" + other + "\"}")
                    .ok());
    auto moved = store.Load("moved");
    EXPECT_EQ(moved.status().code(), absl::StatusCode::kDataLoss) << other;
    EXPECT_NE(moved.status().message().find("a thing state of '" + other +
                                            "', not of 'moved'"),
              std::string::npos)
        << moved.status();
  }
  // A state that exists but cannot be read is not "none" (a loop would
  // start afresh over it).
  ASSERT_TRUE(MakeDirectories(store.StatePath("unreadable")).ok());
  auto unreadable = store.Load("unreadable");
  EXPECT_FALSE(unreadable.ok());
  EXPECT_FALSE(absl::IsNotFound(unreadable.status())) << unreadable.status();
  EXPECT_NE(unreadable.status().message().find("unreadable/state.json"),
            std::string::npos)
      << unreadable.status();
}

}  // namespace
}  // namespace phaseloop::files
