// Every workload bundled under configs/workloads/ loads (no network: loading
// never fetches a Debian source), and together they make a usable split.

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "staging_harness/workloads/workload.h"

namespace phaseloop::workloads {
namespace {

namespace fs = std::filesystem;

constexpr char kDir[] = "configs/workloads";

std::vector<std::string> BundledFiles() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.path().extension() == ".yaml") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Workload> LoadAll() {
  std::vector<Workload> workloads;
  for (const std::string& file : BundledFiles()) {
    auto workload = LoadWorkload(file);
    EXPECT_TRUE(workload.ok()) << workload.status();
    if (workload.ok()) workloads.push_back(*std::move(workload));
  }
  return workloads;
}

TEST(BundledWorkloads, EveryFileLoadsAndIsNamedAfterIt) {
  const std::vector<std::string> files = BundledFiles();
  ASSERT_GE(files.size(), 9u) << "the example and 8+ real programs";
  const std::vector<Workload> workloads = LoadAll();
  ASSERT_EQ(workloads.size(), files.size());
  for (const Workload& workload : workloads) {
    EXPECT_EQ(workload.name, fs::path(workload.path).stem().string())
        << workload.path << ": name the file <name>.yaml";
  }
}

TEST(BundledWorkloads, NamesAreDistinct) {
  std::map<std::string, std::string> seen;
  for (const Workload& workload : LoadAll()) {
    auto [at, inserted] = seen.emplace(workload.name, workload.path);
    EXPECT_TRUE(inserted) << workload.path << " and " << at->second
                          << " are both named " << workload.name;
  }
}

TEST(BundledWorkloads, TheSplitHasTrainAndTestWorkloads) {
  int train = 0;
  int test = 0;
  for (const Workload& workload : LoadAll()) {
    (workload.split == Split::kTrain ? train : test) += 1;
  }
  EXPECT_GE(train, 2) << "train workloads";
  EXPECT_GE(test, 2) << "test workloads";
}

TEST(BundledWorkloads, RealProgramsComeFromDebianSourcePackages) {
  // The example is the README's own project; every other bundled workload
  // is a real program that nobody here wrote.
  for (const Workload& workload : LoadAll()) {
    if (workload.name == "example") continue;
    EXPECT_FALSE(workload.debian_package.empty())
        << workload.path << ": source should be debian:<package>";
  }
}

}  // namespace
}  // namespace phaseloop::workloads
