#include "common/process/self_executable.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::process {
namespace {

namespace fs = std::filesystem;

void WriteFile(const std::string& path, bool executable) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "#!/bin/sh\n";
  chmod(path.c_str(), executable ? 0755 : 0644);
}

TEST(SelfExecutableTest, IsThisTestBinary) {
  const std::string self = SelfExecutable();
  ASSERT_FALSE(self.empty());
  EXPECT_EQ(fs::path(self).filename(), "self_executable_test");
}

TEST(SelfExecutableTest, FindsTheFirstExecutableBesideADirectory) {
  const std::string dir = phaseloop::testing::MakeTempDir();
  WriteFile(dir + "/bin/tool-a", /*executable=*/false);
  WriteFile(dir + "/lib/tool-b", /*executable=*/true);
  fs::create_directories(dir + "/bin/tool-dir");
  EXPECT_EQ(
      ExecutableBeside({"tool-a", "tool-dir", "../lib/tool-b"}, dir + "/bin"),
      dir + "/lib/tool-b");
  EXPECT_EQ(ExecutableBeside({"tool-a", "missing"}, dir + "/bin"), "");
}

TEST(SelfExecutableTest, PhaseloopCcBesideAnInstallOrABazelTree) {
  const std::string install = phaseloop::testing::MakeTempDir();
  WriteFile(install + "/bin/phaseloop-cc", true);
  EXPECT_EQ(PhaseloopCcBeside(install + "/bin"), install + "/bin/phaseloop-cc");
  const std::string bazel = phaseloop::testing::MakeTempDir();
  WriteFile(bazel + "/compiler_driver/cc_wrapper/phaseloop-cc", true);
  fs::create_directories(bazel + "/tools");
  EXPECT_EQ(PhaseloopCcBeside(bazel + "/tools"),
            bazel + "/compiler_driver/cc_wrapper/phaseloop-cc");
  EXPECT_EQ(PhaseloopCcBeside(phaseloop::testing::MakeTempDir()), "");
}

}  // namespace
}  // namespace phaseloop::process
