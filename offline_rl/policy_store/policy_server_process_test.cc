// The store a controller serves for its run (the real `phaseloop policy
// serve` in the background): served when free; when another process holds
// it, the wait is said at once and the end of it names the cause.
#include "offline_rl/policy_store/policy_server_process.h"

#include <sstream>

#include "absl/strings/match.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "offline_rl/policy_store/directory_policy_store.h"

namespace phaseloop::policy_store {
namespace {

constexpr char kPhaseloop[] = "tools/phaseloop";

TEST(PolicyServerProcessTest, AFreeStoreIsServed) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  process::BackgroundProcess server;
  std::ostringstream progress;
  absl::StatusOr<std::string> address = ServePolicyDirectory(
      kPhaseloop, dir + "/store", dir + "/policy", nullptr, &server, &progress);
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_TRUE(absl::StartsWith(*address, "127.0.0.1:")) << *address;
  EXPECT_EQ(progress.str(), "");
  EXPECT_TRUE(process::StopBackground(server).ok());
}

TEST(PolicyServerProcessTest, AStoreInUseIsSaidAtOnceAndNamedAtTheEnd) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  auto held = OpenPolicyStore(dir + "/store");  // holds the store's lock
  ASSERT_TRUE(held.ok()) << held.status();
  process::BackgroundProcess server;
  std::ostringstream progress;
  absl::StatusOr<std::string> address = ServePolicyDirectory(
      kPhaseloop, dir + "/store", dir + "/policy", nullptr, &server, &progress);
  ASSERT_FALSE(address.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(address.status())) << address.status();
  EXPECT_TRUE(absl::StrContains(address.status().message(),
                                "in use by another process"))
      << address.status();
  EXPECT_TRUE(absl::StrContains(progress.str(), "waiting up to 30 s"))
      << progress.str();
  EXPECT_EQ(progress.str().find("waiting"), progress.str().rfind("waiting"))
      << "said once: " << progress.str();
}

}  // namespace
}  // namespace phaseloop::policy_store
