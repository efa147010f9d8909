// ReadCandidatesFile (dataset.h): what a candidates file may hold.
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "offline_rl/learner/dataset.h"

namespace phaseloop::offline_rl {
namespace {

// A candidate holding a pass the wrapper never runs (LLVM 16's Attributor
// miscompiles) is refused with the fix, not learned as choosable.
TEST(CandidatesFileTest, APipelineNoPolicyRunsIsRefusedWithTheFix) {
  const std::string path = testing::MakeTempDir() + "/c.json";
  std::ofstream(path) << R"([{"name": "oz", "pipeline": "default<Oz>"},
                 {"name": "ozattr", "pipeline": "default<Oz>,attributor"}])";
  const absl::Status unsafe = ReadCandidatesFile(path, {}).status();
  EXPECT_EQ(unsafe.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unsafe.message().find("candidate 1 (ozattr)"), std::string::npos)
      << unsafe;
  EXPECT_NE(unsafe.message().find("attributor"), std::string::npos) << unsafe;
  EXPECT_NE(unsafe.message().find("phaseloop candidates mine"),
            std::string::npos)
      << unsafe;
  std::ofstream(path) << R"([{"name": "oz", "pipeline": "default<Oz>"}])";
  EXPECT_TRUE(ReadCandidatesFile(path, {}).ok());
}

}  // namespace
}  // namespace phaseloop::offline_rl
