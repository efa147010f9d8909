#include "staging_harness/workloads/workload.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/testing/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phaseloop::workloads {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A workload directory: w.yaml beside src/ (with a shipped src/data/in.txt).
class WorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = phaseloop::testing::MakeTempDir();
    fs::create_directories(fs::path(dir_) / "src" / "data");
    std::ofstream(fs::path(dir_) / "src" / "data" / "in.txt") << "words\n";
    path_ = (fs::path(dir_) / "w.yaml").string();
  }

  absl::StatusOr<Workload> Load(const std::string& yaml) {
    std::ofstream(path_) << yaml;
    return LoadWorkload(path_);
  }

  // The message of a failed load, "" (and a test failure) if it loaded.
  std::string Error(const std::string& yaml) {
    auto workload = Load(yaml);
    EXPECT_FALSE(workload.ok()) << "loaded:\n" << yaml;
    return workload.ok() ? "" : std::string(workload.status().message());
  }

  std::string dir_;
  std::string path_;
};

constexpr char kValid[] = R"(
name: tiny
split: test
source: src
build: {kind: cmake, command: cmake -S . -B b && cmake --build b,
        artifacts: [b/tiny]}
inputs:
  - file: data/in.txt
  - {file: gen.txt, generate: 'seq 1 "$SEED" > "$OUTPUT"', seed: 7}
run:
  - command: ./tiny data/in.txt
    timeout_s: 2.5
  - name: numeric
    command: ./tiny gen.txt out.txt
    timeout_s: 30
    check: {stdout: false, files: [out.txt], compare: numeric,
            relative_tolerance: 1e-9, exit_status: 3}
check: {exit_status: 1}
)";

TEST_F(WorkloadTest, LoadsEveryFieldOfAValidFile) {
  auto workload = Load(kValid);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_EQ(workload->name, "tiny");
  EXPECT_EQ(workload->split, Split::kTest);
  EXPECT_EQ(workload->path, path_);
  EXPECT_EQ(workload->source_dir, (fs::path(dir_) / "src").string());
  EXPECT_EQ(workload->build.kind, BuildKind::kCmake);
  EXPECT_EQ(workload->build.command, "cmake -S . -B b && cmake --build b");
  EXPECT_EQ(workload->build.artifacts, std::vector<std::string>{"b/tiny"});
  EXPECT_EQ(workload->build.timeout_s, 600);  // the default
  ASSERT_EQ(workload->inputs.size(), 2u);
  EXPECT_EQ(workload->inputs[0].file, "data/in.txt");
  EXPECT_EQ(workload->inputs[0].generate, "");
  EXPECT_EQ(workload->inputs[1].file, "gen.txt");
  EXPECT_EQ(workload->inputs[1].generate, "seq 1 \"$SEED\" > \"$OUTPUT\"");
  EXPECT_EQ(workload->inputs[1].seed, 7u);
  ASSERT_EQ(workload->runs.size(), 2u);
  // The first run has no check of its own: the workload's.
  EXPECT_EQ(workload->runs[0].name, "run[0]");
  EXPECT_EQ(workload->runs[0].timeout_s, 2.5);
  EXPECT_EQ(workload->runs[0].check.exit_status, 1);
  EXPECT_TRUE(workload->runs[0].check.compare_stdout);
  EXPECT_EQ(workload->runs[0].check.compare, Compare::kExact);
  // The second run's check replaces the workload's.
  const Check& check = workload->runs[1].check;
  EXPECT_EQ(workload->runs[1].name, "numeric");
  EXPECT_EQ(check.exit_status, 3);
  EXPECT_FALSE(check.compare_stdout);
  EXPECT_EQ(check.files, std::vector<std::string>{"out.txt"});
  EXPECT_EQ(check.compare, Compare::kNumeric);
  EXPECT_EQ(check.relative_tolerance, 1e-9);
  EXPECT_EQ(check.absolute_tolerance, 0);
}

TEST(ExampleWorkload, TheReadmesExampleLoads) {
  auto workload = LoadWorkload("configs/workloads/example.yaml");
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_EQ(workload->name, "example");
  EXPECT_EQ(workload->source_dir, "configs/workloads/example");
  EXPECT_EQ(workload->build.kind, BuildKind::kMake);
  EXPECT_EQ(workload->build.artifacts, std::vector<std::string>{"wordfreq"});
  ASSERT_EQ(workload->inputs.size(), 2u);
  EXPECT_EQ(workload->inputs[1].seed, 1u);
  ASSERT_EQ(workload->runs.size(), 2u);
  EXPECT_EQ(workload->runs[1].name, "generated");
}

TEST_F(WorkloadTest, MissingFileIsNotFound) {
  auto workload = LoadWorkload(dir_ + "/nope.yaml");
  EXPECT_EQ(workload.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(workload.status().message(), HasSubstr("nope.yaml"));
}

TEST_F(WorkloadTest, InvalidYamlNamesTheLine) {
  EXPECT_THAT(Error("name: a\nsplit: [train\n"),
              HasSubstr(path_ + ":3:1: not valid YAML"));
}

TEST_F(WorkloadTest, ASecondDocumentIsRefusedNotIgnored) {
  // YAML::Load reads the first document alone: the second was dropped.
  EXPECT_THAT(Error("---\nname: a\n---\nbogus: 1\n"),
              HasSubstr(path_ + ":3: a second YAML document begins here"));
}

TEST_F(WorkloadTest, TopLevelMustBeAMapping) {
  EXPECT_THAT(Error("- a\n- b\n"),
              HasSubstr(path_ + ": (top level): must be a mapping"));
}

TEST_F(WorkloadTest, NamesEveryMissingRequiredFieldAtOnce) {
  const std::string error =
      Error("source: src\nbuild: {kind: make}\nrun: [{command: ./a}]\n");
  EXPECT_THAT(error, HasSubstr(path_ + ": name: missing"));
  EXPECT_THAT(error, HasSubstr(path_ + ": split: missing"));
  EXPECT_THAT(error, HasSubstr(path_ + ": build.command: missing"));
  EXPECT_THAT(error, HasSubstr(path_ + ": build.artifacts: missing"));
  EXPECT_THAT(error, HasSubstr(path_ + ": run[0].timeout_s: missing"));
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 4) << error;
}

TEST_F(WorkloadTest, MissingBuildRunAndSourceAreNamed) {
  const std::string error = Error("name: a\nsplit: train\n");
  EXPECT_THAT(error, HasSubstr(path_ + ": source: missing"));
  EXPECT_THAT(error, HasSubstr(path_ + ": build: missing"));
  EXPECT_THAT(error, HasSubstr(path_ + ": run: missing"));
}

// kValid with `from` replaced by `to` (which must occur in it).
std::string Edit(const std::string& from, const std::string& to) {
  std::string yaml = kValid;
  const size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  return yaml;
}

TEST_F(WorkloadTest, RefusesUnknownKeysByName) {
  EXPECT_THAT(Error(Edit("split: test", "split: test\ntimeout: 3")),
              HasSubstr(path_ + ": timeout: unknown field; expected one of: "
                                "build, check, description, inputs, name, "
                                "run, source, split"));
  EXPECT_THAT(Error(Edit("timeout_s: 2.5", "timeout_s: 2.5\n    time: 1")),
              HasSubstr(path_ + ": run[0].time: unknown field"));
  EXPECT_THAT(Error(Edit("artifacts:", "artefacts: [x], artifacts:")),
              HasSubstr(path_ + ": build.artefacts: unknown field"));
  EXPECT_THAT(Error(Edit("seed: 7", "seed: 7, size: 3")),
              HasSubstr(path_ + ": inputs[1].size: unknown field"));
  EXPECT_THAT(Error(Edit("{exit_status: 1}", "{exit_status: 1, diff: yes}")),
              HasSubstr(path_ + ": check.diff: unknown field"));
  // A key that is a list is named as such, not as an empty name.
  EXPECT_THAT(Error(Edit("split: test", "split: test\n? [a, b]\n: 1")),
              HasSubstr(path_ + ": (a key that is not a name): unknown field"));
}

TEST_F(WorkloadTest, RefusesAKeyGivenTwice) {
  EXPECT_THAT(Error(Edit("split: test", "split: test\nsplit: train")),
              HasSubstr(path_ + ": split: given twice"));
}

TEST_F(WorkloadTest, TimeLimitsMustBePositiveNumbers) {
  EXPECT_THAT(
      Error(Edit("timeout_s: 30", "timeout_s: soon")),
      HasSubstr(path_ + ": run[1].timeout_s: must be a positive number, got "
                        "'soon'"));
  EXPECT_THAT(Error(Edit("timeout_s: 2.5", "timeout_s: 0")),
              HasSubstr(": run[0].timeout_s: must be a positive number"));
  EXPECT_THAT(Error(Edit("timeout_s: 2.5", "timeout_s: .inf")),
              HasSubstr(": run[0].timeout_s: must be a positive number"));
  EXPECT_THAT(Error(Edit("artifacts: [b/tiny]}",
                         "artifacts: [b/tiny], timeout_s: -1}")),
              HasSubstr(": build.timeout_s: must be a positive number, got "
                        "'-1'"));
}

TEST_F(WorkloadTest, EnumsNameTheirChoices) {
  EXPECT_THAT(Error(Edit("split: test", "split: validation")),
              HasSubstr(": split: must be train or test, got 'validation'"));
  EXPECT_THAT(Error(Edit("kind: cmake", "kind: ninja")),
              HasSubstr(": build.kind: must be one of make, cmake, command, "
                        "bazel, got 'ninja'"));
  EXPECT_THAT(Error(Edit("compare: numeric", "compare: fuzzy")),
              HasSubstr(": run[1].check.compare: must be exact or numeric"));
}

TEST_F(WorkloadTest, NameMustBeAnIdentifier) {
  EXPECT_THAT(Error(Edit("name: tiny", "name: Tiny Prog")),
              HasSubstr(": name: 'Tiny Prog' must be 1-64 of a-z 0-9"));
}

TEST_F(WorkloadTest, SourceMustBeADirectoryBesideTheFile) {
  EXPECT_THAT(Error(Edit("source: src", "source: elsewhere")),
              HasSubstr(": source: '" + dir_ +
                        "/elsewhere' is not a "
                        "directory"));
}

TEST_F(WorkloadTest, SourceMayBeADebianPackage) {
  auto workload = Load(Edit("source: src", "source: debian:lua5.4"));
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_EQ(workload->debian_package, "lua5.4");
  EXPECT_EQ(workload->source_dir, "");
  auto local = Load(kValid);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->debian_package, "");
}

TEST_F(WorkloadTest, ADebianPackagesShippedInputsAreCheckedWhenFetched) {
  // Loading never fetches: the package's files are not there to check yet.
  // (The same file with `source: src` is refused: ShippedInputsMustExist.)
  std::string yaml = Edit("data/in.txt\n", "sample1.ref\n");
  yaml.replace(yaml.find("source: src"), 11, "source: debian:bzip2");
  auto workload = Load(yaml);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_EQ(workload->inputs[0].file, "sample1.ref");
}

TEST_F(WorkloadTest, ADebianPackageNameIsValidated) {
  for (const char* bad : {"Bzip2", "b", "-bzip2", "bz_ip2", "bz/ip2", ""}) {
    const std::string source = std::string("source: 'debian:") + bad + "'";
    EXPECT_THAT(Error(Edit("source: src", source)),
                HasSubstr(path_ + ": source: '" + bad +
                          "' is not a Debian source package name"))
        << source;
  }
}

TEST(DebianPackageName, FollowsDebianPolicy) {
  for (const char* good :
       {"bzip2", "lua5.4", "libpng1.6", "g++-12", "xz-utils", "0ad"}) {
    EXPECT_TRUE(IsDebianPackageName(good)) << good;
  }
  for (const char* bad : {"", "a", ".x", "+x", "Xz", "x y", "x_y", "x:y"}) {
    EXPECT_FALSE(IsDebianPackageName(bad)) << bad;
  }
}

TEST_F(WorkloadTest, PathsMustStayInsideTheirDirectory) {
  EXPECT_THAT(Error(Edit("[b/tiny]", "[../tiny]")),
              HasSubstr(": build.artifacts[0]: '../tiny' must be a relative "
                        "path"));
  EXPECT_THAT(Error(Edit("file: gen.txt", "file: /tmp/gen.txt")),
              HasSubstr(": inputs[1].file: '/tmp/gen.txt' must be a "
                        "relative path"));
  EXPECT_THAT(Error(Edit("[out.txt]", "[]")),
              HasSubstr(": run[1].check.files: must be a non-empty list"));
  // Listed twice, the file was kept after the first and "not written" by
  // either run the second time: the workload called unusable.
  EXPECT_THAT(Error(Edit("[out.txt]", "[out.txt, out.txt]")),
              HasSubstr(": run[1].check.files[1]: 'out.txt' is listed twice"));
}

TEST_F(WorkloadTest, ShippedInputsMustExist) {
  EXPECT_THAT(Error(Edit("data/in.txt\n", "data/missing.txt\n")),
              HasSubstr(": inputs[0].file: shipped input '" + dir_ +
                        "/src/data/missing.txt' is not a file"));
}

TEST_F(WorkloadTest, GeneratorsNeedASeedAndSeedsAGenerator) {
  EXPECT_THAT(Error(Edit(", seed: 7}", "}")),
              HasSubstr(": inputs[1].seed: missing"));
  EXPECT_THAT(
      Error(Edit("- file: data/in.txt", "- {file: data/in.txt, seed: 1}")),
      HasSubstr(": inputs[0].seed: only a generated input has a seed"));
  EXPECT_THAT(Error(Edit("seed: 7", "seed: -7")),
              HasSubstr(": inputs[1].seed: must be an integer >= 0, got "
                        "'-7'"));
  EXPECT_THAT(Error(Edit("file: gen.txt", "file: data/in.txt")),
              HasSubstr(": inputs[1].file: 'data/in.txt' is already an "
                        "input"));
}

TEST_F(WorkloadTest, ChecksAreValidated) {
  EXPECT_THAT(Error(Edit("exit_status: 3", "exit_status: 300")),
              HasSubstr(": run[1].check.exit_status: must be an integer "
                        "0-255, got '300'"));
  EXPECT_THAT(Error(Edit("stdout: false", "stdout: maybe")),
              HasSubstr(": run[1].check.stdout: must be true or false"));
  EXPECT_THAT(Error(Edit("stdout: false", "stdout: yes")),
              HasSubstr(": run[1].check.stdout: must be true or false, got "
                        "'yes'"));
  EXPECT_THAT(Error(Edit("relative_tolerance: 1e-9", "relative_tolerance: x")),
              HasSubstr(": run[1].check.relative_tolerance: must be a number "
                        ">= 0, got 'x'"));
  EXPECT_THAT(Error(Edit("compare: numeric,\n            relative_tolerance: "
                         "1e-9,",
                         "compare: numeric,")),
              HasSubstr(": run[1].check.relative_tolerance: missing"));
  EXPECT_THAT(Error(Edit("{exit_status: 1}",
                         "{exit_status: 1, absolute_tolerance: 0.1}")),
              HasSubstr(": check.compare: a tolerance applies only to "
                        "compare: numeric"));
}

TEST_F(WorkloadTest, RunsMustBeANonEmptyListWithDistinctNames) {
  EXPECT_THAT(Error(Edit("run:\n", "run: []\nx_run:\n")),
              HasSubstr(": run: must be a non-empty list"));
  EXPECT_THAT(Error(Edit("name: numeric", "name: run[0]")),
              HasSubstr(": run[1].name: 'run[0]' names another run too"));
}

}  // namespace
}  // namespace phaseloop::workloads
