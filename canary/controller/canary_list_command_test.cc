// `canary list` tells a run a controller drives now from one that was
// stopped (or whose controller died) in the phase a rerun resumes from.
#include "canary/controller/canary_list_command.h"

#include <sstream>

#include "canary/controller/canary_state_store.h"
#include "common/files/file_lock.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace phaseloop::canary {
namespace {

v1::CanaryRun SavedRun(const std::string& id, const std::string& phase,
                       int64_t created_ms) {
  v1::CanaryRun run;
  run.set_canary_id(id);
  run.set_service("demo");
  run.set_candidate_version("cand");
  run.set_phase(phase);
  run.set_created_ms(created_ms);
  return run;
}

TEST(CanaryListCommandTest, AnUnfinishedRunNoControllerHoldsIsStopped) {
  const std::string dir = testing::MakeTempDir();
  const CanaryStateStore store(dir);
  ASSERT_TRUE(store.Save(SavedRun("driven", "stepping", 3000)).ok());
  ASSERT_TRUE(store.Save(SavedRun("left", "starting", 2000)).ok());
  ASSERT_TRUE(store.Save(SavedRun("done", "promoted", 1000)).ok());
  auto lock = files::FileLock::Acquire(store.ControllerLockPath("driven"), 0);
  ASSERT_TRUE(lock.ok()) << lock.status();

  CanaryListFlags flags;
  flags.state_dir = dir;
  std::ostringstream out, err;
  ASSERT_EQ(RunCanaryList(flags, out, err), 0) << err.str();
  const std::string table = out.str();
  EXPECT_NE(table.find("stopped: starting"), std::string::npos) << table;
  EXPECT_EQ(table.find("stopped: stepping"), std::string::npos) << table;
  EXPECT_NE(table.find("stepping"), std::string::npos) << table;
  EXPECT_EQ(table.find("stopped: promoted"), std::string::npos) << table;

  flags.json = true;
  std::ostringstream json_out;
  ASSERT_EQ(RunCanaryList(flags, json_out, err), 0) << err.str();
  const nlohmann::json runs = nlohmann::json::parse(json_out.str());
  ASSERT_EQ(runs.size(), 3u);
  for (const nlohmann::json& run : runs) {
    const std::string id = run["canary_id"];
    if (id == "done") {
      EXPECT_FALSE(run.contains("stopped")) << run;
    } else {
      EXPECT_EQ(run["stopped"], id == "left") << run;
    }
  }
}

}  // namespace
}  // namespace phaseloop::canary
