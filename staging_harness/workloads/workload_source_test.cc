#include "staging_harness/workloads/workload_source.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::workloads {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WorkloadSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    cache_ = (fs::path(dir_) / "debian-src").string();
    fs::create_directories(cache_);
  }

  // A workload file w.yaml in the test directory with this `source`.
  Workload Parsed(const std::string& source, const std::string& input_file) {
    const std::string yaml = "name: w\nsplit: train\nsource: " + source +
                             "\nbuild: {kind: make, command: make, "
                             "artifacts: [prog]}\ninputs: [{file: " +
                             input_file +
                             "}]\nrun: [{command: ./prog, timeout_s: 1}]\n";
    auto workload = ParseWorkload(yaml, dir_ + "/w.yaml");
    EXPECT_TRUE(workload.ok()) << workload.status();
    return workload.ok() ? *workload : Workload();
  }

  // The cache layout DebianFetcher leaves: the .dsc and the unpacked tree
  // with its marker. Returns the tree.
  std::string Unpacked(const std::string& package) {
    const fs::path tree = fs::path(cache_) / package;
    fs::create_directories(tree);
    std::ofstream(tree / ".phaseloop-unpacked").close();
    std::ofstream(fs::path(cache_) / (package + "_1.0-1.dsc")) << "dsc\n";
    std::ofstream(tree / "sample.txt") << "data\n";
    return tree.string();
  }

  std::string dir_;
  std::string cache_;
  std::ostringstream progress_;
};

TEST_F(WorkloadSourceTest, ALocalSourceIsItsDirectory) {
  fs::create_directories(fs::path(dir_) / "src");
  std::ofstream(fs::path(dir_) / "src" / "in.txt") << "x\n";
  const Workload workload = Parsed("src", "in.txt");
  auto tree = ResolveWorkloadSource(workload, cache_, progress_);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(*tree, dir_ + "/src");
}

TEST_F(WorkloadSourceTest, ALocalSourceThatIsGoneNamesTheFileAndField) {
  fs::create_directories(fs::path(dir_) / "src");
  std::ofstream(fs::path(dir_) / "src" / "in.txt") << "x\n";
  const Workload workload = Parsed("src", "in.txt");
  fs::remove_all(fs::path(dir_) / "src");
  auto tree = ResolveWorkloadSource(workload, cache_, progress_);
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tree.status().message(),
              HasSubstr(dir_ + "/w.yaml: source: '" + dir_ + "/src'"));
}

TEST_F(WorkloadSourceTest, ACachedDebianPackageIsItsTreeWithoutNetwork) {
  const std::string tree = Unpacked("bzip2");
  auto resolved = ResolveWorkloadSource(Parsed("debian:bzip2", "sample.txt"),
                                        cache_, progress_);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved, tree);
  EXPECT_EQ(progress_.str(), "");  // nothing downloaded
}

TEST_F(WorkloadSourceTest, ADebianPackagesShippedInputMustBeInItsTree) {
  Unpacked("bzip2");
  auto resolved = ResolveWorkloadSource(
      Parsed("debian:bzip2", "data/missing.txt"), cache_, progress_);
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(resolved.status().message(),
              HasSubstr(dir_ + "/w.yaml: inputs[0].file: shipped input "
                               "'data/missing.txt' is not a file of"));
}

TEST_F(WorkloadSourceTest, AnInvalidPackageNameIsRefusedBeforeAnyFetch) {
  Workload workload = Parsed("debian:bzip2", "sample.txt");
  for (const char* bad : {"Bzip2", "bz_ip2", "../bzip2", "-o"}) {
    workload.debian_package = bad;  // as if built in code, not parsed
    auto resolved = ResolveWorkloadSource(workload, cache_, progress_);
    EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(resolved.status().message(),
                HasSubstr(dir_ + "/w.yaml: source: '" + bad +
                          "' is not a Debian source package name"));
  }
  EXPECT_EQ(progress_.str(), "");
  EXPECT_TRUE(fs::is_empty(cache_));  // no apt index, no download
}

}  // namespace
}  // namespace phaseloop::workloads
