#include "canary/load/load_spec_yaml.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <string>

#include "canary/load/load_spec.h"
#include "gtest/gtest.h"

namespace phaseloop::canary::load {
namespace {

absl::StatusOr<LoadSpec> Parse(const std::string& text) {
  return LoadSpecFromYaml(YAML::Load(text), "f.yaml");
}

// The error message for `text`, "" when it parses.
std::string ErrorOf(const std::string& text) {
  auto spec = Parse(text);
  return spec.ok() ? "" : std::string(spec.status().message());
}

constexpr char kMix[] = "mix: [{kind: deflate, payload_bytes: 10}]\n";

TEST(LoadSpecYamlTest, TheSampleConfigParses) {
  auto spec = LoadSpecFromFile("configs/canary/load.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->rate, 200);
  EXPECT_EQ(spec->arrival, Arrival::kPoisson);
  EXPECT_EQ(spec->duration_s, 30);
  EXPECT_EQ(spec->max_requests, 0);
  EXPECT_DOUBLE_EQ(spec->timeout_s, 2);
  EXPECT_EQ(spec->max_in_flight, 16);
  ASSERT_EQ(spec->mix.size(), 3u);
  EXPECT_EQ(spec->mix[0].kind, "deflate");
  EXPECT_EQ(spec->mix[0].weight, 3);
  EXPECT_EQ(spec->mix[0].min_payload_bytes, 4096);
  EXPECT_EQ(spec->mix[0].max_payload_bytes, 4096);
  EXPECT_EQ(spec->mix[0].seed, 11u);
  EXPECT_EQ(spec->mix[1].min_payload_bytes, 512);
  EXPECT_EQ(spec->mix[1].max_payload_bytes, 16384);
}

TEST(LoadSpecYamlTest, LeftOutFieldsKeepTheDefaults) {
  auto spec = Parse(std::string("duration_s: 5\n") + kMix);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const LoadSpec defaults;
  EXPECT_EQ(spec->rate, defaults.rate);
  EXPECT_EQ(spec->arrival, Arrival::kUniform);
  EXPECT_EQ(spec->max_in_flight, defaults.max_in_flight);
  EXPECT_EQ(spec->mix[0].weight, 1);
  EXPECT_EQ(spec->mix[0].seed, 1u);  // its position
}

TEST(LoadSpecYamlTest, ErrorsNameTheFileAndTheField) {
  const std::string base = std::string("duration_s: 5\n") + kMix;
  struct Case {
    std::string yaml;
    std::string field;
    std::string problem;
  };
  const Case cases[] = {
      {"rate: fast\n" + base, "f.yaml: load.rate: ", "expected a number"},
      {"rate: 0\n" + base, "f.yaml: load.rate: ", "outside"},
      {"arrival: bursty\n" + base,
       "load.arrival: ", "\"bursty\" is not a choice; use uniform or poisson"},
      {"seed: -3\n" + base, "load.seed: ", "must be at least 0, got -3"},
      {"max_requests: 2.5\n" + base, "load.max_requests: ", "whole number"},
      {"timeout_ms: 0\n" + base, "load.timeout_ms: ", "outside"},
      {"max_in_flight: 0\n" + base, "load.max_in_flight: ", "outside"},
      {"max_in_flight: 100000\n" + base,
       "load.max_in_flight: ", "100000 is outside [0, 4096]"},
      {"late_threshold_ms: -1\n" + base, "load.late_threshold_ms: ", "< 0"},
      {"rates: 5\n" + base, "load.rates: ", "unknown field"},
      {kMix, "load.duration_s: ", "needs a bound"},
      {"duration_s: 5\nmix: []\n", "load.mix: ", "expected a list"},
      {"duration_s: 5\nmix: [{weight: 1}]\n", "load.mix[0].kind: ", "missing"},
      {"duration_s: 5\nmix: [{kind: a/b}]\n",
       "load.mix[0].kind: ", "not a kind name"},
      {"duration_s: 5\nmix: [{kind: a}, {kind: a}]\n",
       "load.mix[1].kind: ", "twice"},
      {"duration_s: 5\nmix: [{kind: a, weight: -1}]\n",
       "load.mix[0].weight: ", ">= 0"},
      {"duration_s: 5\nmix: [{kind: a, weight: 0}]\n",
       "load.mix: ", "every weight is 0"},
      {"duration_s: 5\nmix: [{kind: a, payload_bytes: {min: 9, max: 3}}]\n",
       "load.mix[0].payload_bytes: ", "above max"},
      {"duration_s: 5\nmix: [{kind: a, payload_bytes: {min: 9}}]\n",
       "load.mix[0].payload_bytes: ", "both min and max"},
      {"duration_s: 5\nmix: [{kind: a, payload_bytes: [1]}]\n",
       "load.mix[0].payload_bytes: ", "a byte count"},
      {"duration_s: 5\nmix: [{kind: a, payload_bytes: 999999999999}]\n",
       "load.mix[0].payload_bytes: ", "not a range"},
      {"duration_s: 5\nmix: [{kind: a, colour: red}]\n",
       "load.mix[0].colour: ", "unknown field"},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(c.yaml);
    EXPECT_NE(error.find(c.field), std::string::npos) << c.yaml << "\n"
                                                      << error;
    EXPECT_NE(error.find(c.problem), std::string::npos) << c.yaml << "\n"
                                                        << error;
    EXPECT_NE(error.find("f.yaml"), std::string::npos) << error;
    EXPECT_NE(error.find("(configs/canary/load.yaml documents every field)"),
              std::string::npos)
        << error;
  }
}

TEST(LoadSpecYamlTest, FileErrorsNameTheFile) {
  auto missing = LoadSpecFromFile("/nonexistent/load.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(
                "/nonexistent/load.yaml; give an existing file "
                "(configs/canary/load.yaml is an example)"),
            std::string::npos)
      << missing.status();
  // Nothing beside load: in a load file.
  const std::string extra = ::testing::TempDir() + "/extra.yaml";
  std::ofstream(extra) << "load: {duration_s: 5, mix: [{kind: a}]}\nrate: 9\n";
  auto beside = LoadSpecFromFile(extra);
  EXPECT_NE(beside.status().message().find("extra.yaml: rate: unknown field"),
            std::string::npos)
      << beside.status();
  // The judge's file has no load: section.
  auto other = LoadSpecFromFile("configs/canary/judge.yaml");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("no load: section"),
            std::string::npos)
      << other.status();
}

}  // namespace
}  // namespace phaseloop::canary::load
