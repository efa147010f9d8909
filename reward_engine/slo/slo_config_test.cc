#include "reward_engine/slo/slo_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_replace.h"

namespace phaseloop::slo {
namespace {

constexpr char kValid[] = R"(apiVersion: openslo/v1
kind: SLO
metadata:
  name: checkout-latency
  displayName: Checkout within 300 ms
spec:
  service: checkout
  indicator:
    metadata:
      name: checkout-p95
    spec:
      thresholdMetric:
        metricSource:
          type: phaseloop
          spec:
            quantile: 0.95
  timeWindow:
    - duration: 28d
      isRolling: true
  budgetingMethod: Occurrences
  objectives:
    - op: lte
      value: 300
      target: 0.995
)";

std::string Replace(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// The error of parsing `text` ("" if it parsed).
std::string ErrorOf(const std::string& text) {
  auto slos = ParseSloYaml(text, "test.yaml");
  return slos.ok() ? "" : std::string(slos.status().message());
}

std::string TempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir =
      std::string(base ? base : "/tmp") + "/slo_config_test_" +
      std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Found by slo_yaml_fuzzer: yaml-cpp 0.7's LoadAll never returned on a
// file holding ",", allocating until memory ran out.
TEST(SloConfigTest, AMalformedStreamIsAnErrorNotAHang) {
  for (const char* text : {",", "\n,\n", "---\n,\n---\n,"}) {
    const auto slos = ParseSloYaml(text, "bad.yaml");
    ASSERT_FALSE(slos.ok()) << text;
    EXPECT_NE(slos.status().message().find("bad.yaml"), std::string::npos)
        << slos.status();
  }
}

TEST(SloConfigTest, ParsesTheSupportedSubset) {
  auto slos = ParseSloYaml(kValid, "test.yaml");
  ASSERT_TRUE(slos.ok()) << slos.status();
  ASSERT_EQ(slos->size(), 1u);
  const Slo& slo = (*slos)[0];
  EXPECT_EQ(slo.name, "checkout-latency");
  EXPECT_EQ(slo.display_name, "Checkout within 300 ms");
  EXPECT_EQ(slo.service, "checkout");
  EXPECT_EQ(slo.threshold_ms, 300);
  EXPECT_EQ(slo.target, 0.995);
  EXPECT_EQ(slo.window_ms, int64_t{28} * 24 * 3600 * 1000);
  EXPECT_EQ(slo.budgeting_method, "Occurrences");
  EXPECT_EQ(slo.time_slice_target, 0);
  EXPECT_EQ(slo.source, "test.yaml");
}

TEST(SloConfigTest, TimeslicesAndTargetPercent) {
  std::string text =
      Replace("budgetingMethod: Occurrences", "budgetingMethod: Timeslices");
  text = absl::StrReplaceAll(
      text, {{"      target: 0.995\n",
              "      targetPercent: 99\n      timeSliceTarget: 0.9\n"
              "      timeSliceWindow: 1m\n"}});
  auto slos = ParseSloYaml(text, "test.yaml");
  ASSERT_TRUE(slos.ok()) << slos.status();
  EXPECT_EQ((*slos)[0].budgeting_method, "Timeslices");
  EXPECT_DOUBLE_EQ((*slos)[0].target, 0.99);
  EXPECT_EQ((*slos)[0].time_slice_target, 0.9);
  EXPECT_EQ((*slos)[0].time_slice_window_ms, 60000);
  // A slice holds whole engine windows.
  EXPECT_TRUE(CheckTimeSlices(*slos, 10000).ok());
  EXPECT_TRUE(CheckTimeSlices(*slos, 60000).ok());
  const absl::Status odd = CheckTimeSlices(*slos, 7000);
  EXPECT_TRUE(absl::IsInvalidArgument(odd));
  EXPECT_NE(odd.message().find("test.yaml: SLO "), std::string::npos) << odd;
  EXPECT_NE(odd.message().find("not a multiple of the reward engine's window "
                               "(7000 ms)"),
            std::string::npos)
      << odd;
  // Only with Timeslices.
  auto occurrences =
      ParseSloYaml(absl::StrReplaceAll(
                       Replace("budgetingMethod: Occurrences",
                               "budgetingMethod: Occurrences"),
                       {{"      target: 0.995\n",
                         "      target: 0.995\n      timeSliceWindow: 1m\n"}}),
                   "test.yaml");
  ASSERT_FALSE(occurrences.ok());
  EXPECT_NE(occurrences.status().message().find("timeSliceWindow"),
            std::string::npos)
      << occurrences.status();

  // Without timeSliceTarget the slice target is the target.
  auto plain = ParseSloYaml(
      Replace("budgetingMethod: Occurrences", "budgetingMethod: Timeslices"),
      "test.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)[0].time_slice_target, 0.995);
}

TEST(SloConfigTest, ErrorsNameTheFileTheFieldAndTheFix) {
  std::string e = ErrorOf(Replace("openslo/v1", "openslo/v1alpha"));
  EXPECT_NE(e.find("test.yaml: document 1: apiVersion: \"openslo/v1alpha\" is "
                   "not supported; use apiVersion: openslo/v1"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("kind: SLO", "kind: SLI"));
  EXPECT_NE(e.find("kind: \"SLI\" is not supported"), std::string::npos) << e;

  e = ErrorOf(Replace("      value: 300\n", ""));
  EXPECT_NE(e.find("test.yaml: document 1 (SLO \"checkout-latency\"): "
                   "spec.objectives[0].value: missing threshold"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("(configs/slo/demo-service.yaml documents every field)"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("value: 300", "value: fast"));
  EXPECT_NE(e.find("spec.objectives[0].value: expected a number, got \"fast\""),
            std::string::npos)
      << e;

  e = ErrorOf(Replace("target: 0.995", "target: 99.5"));
  EXPECT_NE(e.find("spec.objectives[0].target: 99.5 is outside (0, 1); write "
                   "a fraction"),
            std::string::npos)
      << e;
  EXPECT_NE(ErrorOf(Replace("target: 0.995", "target: 1")).find("outside"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace("target: 0.995", "target: 0")).find("outside"),
            std::string::npos);

  e = ErrorOf(Replace("duration: 28d", "duration: 4 weeks"));
  EXPECT_NE(e.find("spec.timeWindow[0].duration: bad duration \"4 weeks\"; "
                   "write a positive integer and a unit"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("duration: 28d", "duration: 1M"));
  EXPECT_NE(e.find("calendar units"), std::string::npos) << e;
  e = ErrorOf(Replace("isRolling: true", "isRolling: yes"));
  EXPECT_NE(e.find("spec.timeWindow[0].isRolling: expected true or false, "
                   "got \"yes\""),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("  name: checkout-latency\n",
                      "  name: checkout-latency\n  nmae: other\n"));
  EXPECT_NE(e.find("metadata.nmae: unknown field"), std::string::npos) << e;
  e = ErrorOf(Replace("isRolling: true", "isRolling: false"));
  EXPECT_NE(e.find("spec.timeWindow[0].isRolling: only rolling windows"),
            std::string::npos)
      << e;

  e = ErrorOf(Replace("op: lte", "op: gt"));
  EXPECT_NE(e.find("spec.objectives[0].op: \"gt\" is not supported"),
            std::string::npos)
      << e;
  e = ErrorOf(
      Replace("budgetingMethod: Occurrences", "budgetingMethod: Events"));
  EXPECT_NE(e.find("spec.budgetingMethod: \"Events\" is not supported; use "
                   "Occurrences or Timeslices"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("type: phaseloop", "type: prometheus"));
  EXPECT_NE(e.find("metricSource.type: \"prometheus\" is not supported"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("quantile: 0.95", "quantile: 0.99"));
  EXPECT_NE(e.find("only 0.95 is supported"), std::string::npos) << e;
  e = ErrorOf(Replace("name: checkout-latency", "name: Checkout_Latency"));
  EXPECT_NE(e.find("metadata.name: \"Checkout_Latency\" is not a valid name"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("  budgetingMethod:",
                      "  alertPolicies: [x]\n  budgetingMethod:"));
  EXPECT_NE(e.find("spec.alertPolicies: alert policies are not supported"),
            std::string::npos)
      << e;
  e = ErrorOf(
      Replace("  budgetingMethod:", "  budgetMethod: x\n  budgetingMethod:"));
  EXPECT_NE(e.find("spec.budgetMethod: unknown field; expected one of:"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("      target: 0.995\n",
                      "      target: 0.995\n      timeSliceTarget: 0.9\n"));
  EXPECT_NE(e.find("timeSliceTarget: only meaningful with budgetingMethod: "
                   "Timeslices"),
            std::string::npos)
      << e;
  e = ErrorOf("spec: [unclosed\n");
  EXPECT_NE(e.find("test.yaml: line "), std::string::npos) << e;
  EXPECT_NE(e.find("not valid YAML"), std::string::npos) << e;
  e = ErrorOf("# nothing\n");
  EXPECT_NE(e.find("no SLO found"), std::string::npos) << e;
}

// The review: the indicator's metadata took any key (and a name twice), and
// metricSourceRef was accepted and ignored.
TEST(SloConfigTest, TheIndicatorsMetadataAndSourceAreChecked) {
  std::string e =
      ErrorOf(Replace("      name: checkout-p95\n",
                      "      name: checkout-p95\n      bogus: 1\n"));
  EXPECT_NE(e.find("spec.indicator.metadata.bogus: unknown field"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("      name: checkout-p95\n",
                      "      name: checkout-p95\n      name: other\n"));
  EXPECT_NE(e.find("spec.indicator.metadata.name: given twice"),
            std::string::npos)
      << e;
  e = ErrorOf(Replace("          type: phaseloop\n",
                      "          type: phaseloop\n"
                      "          metricSourceRef: prometheus-prod\n"));
  EXPECT_NE(e.find("metricSource.metricSourceRef: not supported"),
            std::string::npos)
      << e;
  EXPECT_EQ(ErrorOf(Replace("      name: checkout-p95\n",
                            "      name: checkout-p95\n"
                            "      labels: {team: payments}\n")),
            "");
}

TEST(SloConfigTest, DuplicateNamesPerServiceAreRejected) {
  const std::string two = std::string(kValid) + "---\n" + kValid;
  std::string e = ErrorOf(two);
  EXPECT_NE(e.find("SLO \"checkout-latency\" of service \"checkout\" is "
                   "already defined in test.yaml"),
            std::string::npos)
      << e;
  // The same name for another service is fine.
  const std::string other = std::string(kValid) + "---\n" +
                            Replace("service: checkout", "service: search");
  EXPECT_EQ(ErrorOf(other), "");

  const std::string dir = TempDir();
  std::ofstream(dir + "/a.yaml") << kValid;
  std::ofstream(dir + "/b.yml") << kValid;
  auto slos = LoadSloDirectory(dir);
  ASSERT_FALSE(slos.ok());
  EXPECT_NE(
      slos.status().message().find(dir + "/b.yml: SLO \"checkout-latency\""),
      std::string::npos)
      << slos.status();
  EXPECT_NE(
      slos.status().message().find("already defined in " + dir + "/a.yaml"),
      std::string::npos)
      << slos.status();
}

// What an engine's command loads: slices of whole engine windows only.
TEST(SloConfigTest, LoadingForAnEngineChecksItsTimeslices) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/a.yaml") << absl::StrReplaceAll(
      Replace("budgetingMethod: Occurrences", "budgetingMethod: Timeslices"),
      {{"      target: 0.995\n",
        "      target: 0.995\n      timeSliceWindow: 1m\n"}});
  EXPECT_TRUE(LoadSloDirectory(dir, 10000).ok());
  auto odd = LoadSloDirectory(dir, 7000);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find(dir + "/a.yaml: SLO "),
            std::string::npos)
      << odd.status();
}

TEST(SloConfigTest, LoadsDirectoriesInNameOrder) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/b.yaml") << Replace("service: checkout", "service: b");
  std::ofstream(dir + "/a.yaml") << Replace("service: checkout", "service: a");
  std::ofstream(dir + "/notes.txt") << "not yaml: [";
  auto slos = LoadSloDirectory(dir);
  ASSERT_TRUE(slos.ok()) << slos.status();
  ASSERT_EQ(slos->size(), 2u);
  EXPECT_EQ((*slos)[0].service, "a");
  EXPECT_EQ((*slos)[0].source, dir + "/a.yaml");
  EXPECT_EQ((*slos)[1].service, "b");

  std::filesystem::create_directories(dir + "/empty");
  auto empty = LoadSloDirectory(dir + "/empty");
  EXPECT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no *.yaml SLO files"),
            std::string::npos);
  EXPECT_EQ(LoadSloDirectory(dir + "/missing").status().code(),
            absl::StatusCode::kNotFound);
  auto missing = LoadSloFile(dir + "/missing.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(
                "missing.yaml; give an existing file "
                "(configs/slo/demo-service.yaml is an example)"),
            std::string::npos)
      << missing.status();
}

// `config check` walks subdirectories; the engine read one level, so a
// nested SLO passed the check and its windows were dead-lettered.
TEST(SloConfigTest, AnSloInASubdirectoryIsAnErrorNotIgnored) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/a.yaml") << Replace("service: checkout", "service: a");
  std::filesystem::create_directories(dir + "/team-b");
  std::ofstream(dir + "/team-b/b.yaml")
      << Replace("service: checkout", "service: b");
  auto slos = LoadSloDirectory(dir);
  ASSERT_FALSE(slos.ok());
  EXPECT_EQ(slos.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(slos.status().message().find(dir + "/team-b/b.yaml is in a "
                                               "subdirectory"),
            std::string::npos)
      << slos.status();
  // The subdirectory itself is an SLO directory of its own.
  auto team = LoadSloDirectory(dir + "/team-b");
  ASSERT_TRUE(team.ok()) << team.status();
  EXPECT_EQ((*team)[0].service, "b");

  // A linked subdirectory is one too (config check follows links).
  const std::string linked = dir + "/linked";
  std::filesystem::create_directories(linked);
  std::ofstream(linked + "/a.yaml")
      << Replace("service: checkout", "service: a");
  std::filesystem::create_directory_symlink(dir + "/team-b",
                                            linked + "/team-b");
  EXPECT_EQ(LoadSloDirectory(linked).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A link back up the tree is listed once, not followed round and round.
  const std::string looped = dir + "/looped";
  std::filesystem::create_directories(looped);
  std::ofstream(looped + "/a.yaml")
      << Replace("service: checkout", "service: a");
  std::filesystem::create_directory_symlink(looped, looped + "/current");
  auto once = LoadSloDirectory(looped);
  ASSERT_TRUE(once.ok()) << once.status();
  EXPECT_EQ(once->size(), 1u);

  // A Kubernetes ConfigMap mount: the files link into a dot-named copy.
  const std::string mount = dir + "/mount";
  const std::string copy = mount + "/..2026_11_30_09_00_00.1";
  std::filesystem::create_directories(copy);
  std::ofstream(copy + "/a.yaml") << Replace("service: checkout", "service: a");
  std::filesystem::create_directory_symlink(copy, mount + "/..data");
  std::filesystem::create_symlink(mount + "/..data/a.yaml", mount + "/a.yaml");
  auto mounted = LoadSloDirectory(mount);
  ASSERT_TRUE(mounted.ok()) << mounted.status();
  ASSERT_EQ(mounted->size(), 1u);
  EXPECT_EQ((*mounted)[0].service, "a");
}

TEST(SloConfigTest, ShippedConfigsLoad) {
  auto slos = LoadSloDirectory("configs/slo");
  ASSERT_TRUE(slos.ok()) << slos.status();
  bool demo = false;
  for (const Slo& slo : *slos) {
    if (slo.service == "demo-service") {
      demo = true;
      EXPECT_EQ(slo.name, "demo-service-latency");
      EXPECT_EQ(slo.threshold_ms, 250);
      EXPECT_EQ(slo.target, 0.99);
      EXPECT_EQ(slo.window_ms, int64_t{30} * 24 * 3600 * 1000);
    }
  }
  EXPECT_TRUE(demo);
}

TEST(SloConfigTest, Durations) {
  EXPECT_EQ(*ParseDurationMs("30d"), int64_t{30} * 24 * 3600 * 1000);
  EXPECT_EQ(*ParseDurationMs("5m"), 300000);
  EXPECT_EQ(*ParseDurationMs("2w"), int64_t{14} * 24 * 3600 * 1000);
  EXPECT_EQ(*ParseDurationMs("10s"), 10000);
  for (const char* bad : {"", "d", "30", "-1d", "0d", "1.5h", "30 d", "3x"}) {
    EXPECT_FALSE(ParseDurationMs(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatDurationMs(int64_t{30} * 24 * 3600 * 1000), "30d");
  EXPECT_EQ(FormatDurationMs(6 * 3600 * 1000), "6h");
  EXPECT_EQ(FormatDurationMs(300000), "5m");
  EXPECT_EQ(FormatDurationMs(1500), "1500ms");
}

}  // namespace
}  // namespace phaseloop::slo
