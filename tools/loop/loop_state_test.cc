#include "tools/loop/loop_state.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::loop {
namespace {

v1::LoopIteration Iteration(const std::string& candidate,
                            const std::string& publish_status) {
  v1::LoopIteration it;
  it.set_candidate_version(candidate);
  v1::LoopStage* train = it.add_stages();
  train->set_name("train");
  train->set_status("done");
  if (!publish_status.empty()) {
    v1::LoopStage* publish = it.add_stages();
    publish->set_name("publish");
    publish->set_status(publish_status);
  }
  return it;
}

v1::LoopRun FourIterations() {
  v1::LoopRun run;
  run.set_loop_id("demo");
  run.set_policy_store("127.0.0.1:7400");
  *run.add_iterations() = Iteration("aaaa", "done");
  *run.add_iterations() = Iteration("", "");             // the gate refused
  *run.add_iterations() = Iteration("bbbb", "running");  // interrupted
  *run.add_iterations() = Iteration("cccc", "done");
  return run;
}

TEST(LoopStateTest, PublishedVersionsAreThoseWhosePublishStageFinished) {
  EXPECT_EQ(PublishedVersions(FourIterations()),
            (std::vector<std::string>{"aaaa", "cccc"}));
  EXPECT_TRUE(PublishedVersions(v1::LoopRun()).empty());
}

// A resumed loop's store by another name holds what the loop published
// there; another store does not.
TEST(LoopStateTest, AResumedLoopKeepsItsStoreByAnyAddress) {
  const v1::LoopRun run = FourIterations();
  EXPECT_TRUE(CheckResumedStore(run, "127.0.0.1:7400", {"aaaa", "cccc"}).ok());
  // The same address, another store (started afresh).
  const absl::Status afresh = CheckResumedStore(run, "127.0.0.1:7400", {});
  EXPECT_EQ(afresh.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(afresh.message().find("published the version aaaa to the store "
                                  "at 127.0.0.1:7400, and the store answering "
                                  "there now does not hold it"),
            std::string::npos)
      << afresh.message();
  EXPECT_TRUE(
      CheckResumedStore(run, "localhost:7400", {"zzzz", "cccc", "aaaa"}).ok());
  const absl::Status other =
      CheckResumedStore(run, "localhost:7401", {"aaaa", "bbbb"});
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(other.message().find("the store at localhost:7401 does not hold "
                                 "the version cccc it published there"),
            std::string::npos)
      << other.message();
  EXPECT_NE(other.message().find("pass 127.0.0.1:7400"), std::string::npos);
  // Nothing published yet: no channel of the old store matters.
  v1::LoopRun fresh;
  fresh.set_policy_store("127.0.0.1:7400");
  *fresh.add_iterations() = Iteration("aaaa", "running");
  EXPECT_TRUE(CheckResumedStore(fresh, "somewhere:1", {}).ok());
}

}  // namespace
}  // namespace phaseloop::loop
