#include "tools/config/config_check.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/config/config_check_command.h"

namespace phaseloop::config_check {
namespace {

// The kind each shipped config is, by where it lives.
std::string ExpectedKind(const std::string& path) {
  if (path.find("rollout_judge") != std::string::npos) return "judge";
  if (path.find("canary/judge") != std::string::npos) return "judge";
  if (path.find("canary/load") != std::string::npos) return "load";
  if (path.find("error_budget_policy") != std::string::npos) {
    return "budget-policy";
  }
  for (const char* kind : {"learner", "loop", "slo", "workloads"}) {
    if (path.find(std::string("configs/") + kind + "/") != std::string::npos) {
      return std::string(kind) == "workloads" ? "workload" : kind;
    }
  }
  if (path.find("configs/services/") != std::string::npos) return "service";
  return "?";
}

TEST(ConfigCheckTest, EveryShippedConfigIsValidAndItsKindIsTold) {
  auto files = ConfigFiles({"configs"});
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_GE(files->size(), 20u);
  for (const auto& [file, found_in_directory] : *files) {
    EXPECT_TRUE(found_in_directory) << file;
    const CheckedConfig checked = CheckConfig(file, std::nullopt);
    EXPECT_TRUE(checked.status.ok()) << file << ": " << checked.status;
    ASSERT_TRUE(checked.kind.has_value()) << file;
    EXPECT_EQ(ConfigKindName(*checked.kind), ExpectedKind(file)) << file;
    EXPECT_FALSE(checked.summary.empty()) << file;
  }
  const CheckedConfig service =
      CheckConfig("configs/services/demo.yaml", std::nullopt);
  EXPECT_EQ(service.summary,
            "demo-service: 3 steps up to 50 % of traffic, load 400 "
            "requests/s, 2 exploration tiers, 1 SLO");
}

std::string Write(const std::string& dir, const std::string& name,
                  const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigCheckTest, AnInvalidFileIsNamedWithItsParsersError) {
  const std::string dir = testing::MakeTempDir();
  const std::string judge =
      Write(dir, "judge.yaml", "confidence: 2\nmetrics: {}\n");
  const CheckedConfig checked = CheckConfig(judge, std::nullopt);
  ASSERT_TRUE(checked.kind.has_value());
  EXPECT_EQ(*checked.kind, ConfigKind::kJudge);
  EXPECT_EQ(checked.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(checked.status.message().find(judge +
                                          ": confidence: 2 is outside (0, 1)"),
            std::string::npos)
      << checked.status;
  // Given as another kind, the other parser refuses it.
  const CheckedConfig as_budget = CheckConfig(judge, ConfigKind::kBudgetPolicy);
  EXPECT_NE(as_budget.status.message().find("confidence: unknown field"),
            std::string::npos)
      << as_budget.status;
}

// A service whose SLO directory has no SLO for it: `canary run` refuses
// it (its windows could get no reward), and so does `config check`, which
// said ok.
TEST(ConfigCheckTest, AServiceWithoutAnSloIsInvalid) {
  const std::string dir = testing::MakeTempDir();
  for (const char* sub : {"/services", "/canary", "/slo"}) {
    std::filesystem::create_directories(dir + sub);
  }
  std::filesystem::copy_file("configs/canary/rollout_judge.yaml",
                             dir + "/canary/rollout_judge.yaml");
  std::filesystem::copy_file("configs/error_budget_policy.yaml",
                             dir + "/error_budget_policy.yaml");
  std::filesystem::copy_file("configs/slo/demo-service.yaml",
                             dir + "/slo/demo-service.yaml");
  std::string text = testing::ReadFileOrEmpty("configs/services/demo.yaml");
  const std::string from = "service: demo-service";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "service: demo-servcie");
  const std::string path = Write(dir + "/services", "svc.yaml", text);
  const CheckedConfig checked = CheckConfig(path, std::nullopt);
  EXPECT_EQ(checked.status.code(), absl::StatusCode::kInvalidArgument)
      << checked.status;
  EXPECT_NE(checked.status.message().find(
                "/services/../slo has no SLO whose spec.service is "
                "demo-servcie"),
            std::string::npos)
      << checked.status;
}

TEST(ConfigCheckTest, AKindThatCannotBeToldAsksForKind) {
  const std::string dir = testing::MakeTempDir();
  for (const char* text : {"colour: red\n", "", "- a\n- b\n"}) {
    const CheckedConfig checked =
        CheckConfig(Write(dir, "x.yaml", text), std::nullopt);
    EXPECT_FALSE(checked.kind.has_value()) << text;
    EXPECT_NE(checked.status.message().find(
                  "give --kind (service, judge, budget-policy, load, slo, "
                  "learner, loop, workload)"),
              std::string::npos)
        << checked.status;
  }
  // An empty judge is the defaults: valid when the kind is given.
  EXPECT_TRUE(CheckConfig(Write(dir, "empty.yaml", ""), ConfigKind::kJudge)
                  .status.ok());
}

// A loop's check reaches the service and learner files it names.
TEST(ConfigCheckTest, ALoopsServiceIsCheckedWithIt) {
  const std::string dir = testing::MakeTempDir();
  std::filesystem::create_directories(dir + "/loop");
  std::ifstream shipped("configs/loop/demo.yaml");
  std::stringstream text;
  text << shipped.rdbuf();
  std::string loop = text.str();
  const std::string absolute_configs =
      std::filesystem::absolute("configs").string();
  const size_t service = loop.find("service: ");
  ASSERT_NE(service, std::string::npos);
  loop.replace(service, loop.find('\n', service) - service,
               "service: ../broken-service.yaml");
  const size_t learner = loop.find("learner: ");
  ASSERT_NE(learner, std::string::npos);
  loop.replace(
      learner, loop.find('\n', learner) - learner,
      "learner: " + absolute_configs + "/learner/speed_candidate_cql.yaml");
  Write(dir, "broken-service.yaml", "service: x\nhandler: 3\n");
  const CheckedConfig checked =
      CheckConfig(Write(dir + "/loop", "demo.yaml", loop), std::nullopt);
  EXPECT_NE(checked.status.message().find(": service: "), std::string::npos)
      << checked.status;
  EXPECT_NE(checked.status.message().find("broken-service.yaml"),
            std::string::npos)
      << checked.status;
}

TEST(ConfigCheckTest, TheCommandPrintsATableAndExitsTwoOnAnyInvalidFile) {
  const std::string dir = testing::MakeTempDir();
  Write(dir, "bad-judge.yaml", "confidence: 2\n");
  std::filesystem::copy_file("configs/canary/judge.yaml", dir + "/judge.yaml");
  Write(dir, "notes.txt", "not a config");
  std::ostringstream out, err;
  ConfigCheckFlags flags;
  flags.paths = {dir};
  EXPECT_EQ(RunConfigCheck(flags, out, err), 2);
  EXPECT_NE(out.str().find("BAD  judge  " + dir + "/bad-judge.yaml\n    " +
                           dir + "/bad-judge.yaml: confidence: 2 is outside"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("ok   judge  " + dir + "/judge.yaml"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("notes.txt"), std::string::npos) << out.str();
  EXPECT_EQ(err.str(), "2 config files: 1 valid, 1 not\n");

  std::ostringstream json_out, json_err;
  flags.paths = {dir + "/judge.yaml"};
  flags.json = true;
  EXPECT_EQ(RunConfigCheck(flags, json_out, json_err), 0);
  EXPECT_NE(json_out.str().find("\"kind\": \"judge\""), std::string::npos)
      << json_out.str();
  EXPECT_NE(json_out.str().find("\"ok\": true"), std::string::npos)
      << json_out.str();

  // A BAD file in JSON, its error holding bytes that are not UTF-8 (the
  // file's own key): replaced, not a crash.
  std::ostringstream bad_out, bad_err;
  flags.paths = {
      Write(dir, "latin1.yaml", "confidence: 0.9\nm\xe9trics: {}\n")};
  EXPECT_EQ(RunConfigCheck(flags, bad_out, bad_err), 2);
  EXPECT_NE(bad_out.str().find("\"ok\": false"), std::string::npos)
      << bad_out.str();
  EXPECT_NE(bad_out.str().find("unknown field"), std::string::npos)
      << bad_out.str();

  std::ostringstream none_out, none_err;
  flags.paths = {dir + "/missing.yaml"};
  EXPECT_EQ(RunConfigCheck(flags, none_out, none_err), 2);
  EXPECT_NE(none_err.str().find("missing.yaml: no such file or directory"),
            std::string::npos)
      << none_err.str();
  // --json (set above) answers in JSON also when nothing could be checked.
  const nlohmann::json refused =
      nlohmann::json::parse(none_out.str(), nullptr, false);
  ASSERT_TRUE(refused.is_object()) << none_out.str();
  EXPECT_EQ(refused["ok"], false);
  EXPECT_NE(refused["error"].get<std::string>().find("missing.yaml"),
            std::string::npos);
  none_out.str("");
  flags.paths = {dir};
  flags.kind = "judges";
  EXPECT_EQ(RunConfigCheck(flags, none_out, none_err), 2);
  EXPECT_NE(none_err.str().find("--kind judges is not a kind; use one of "
                                "service, judge"),
            std::string::npos)
      << none_err.str();
}

// Teams keep configs beside other tools' files and link shared ones in.
TEST(ConfigCheckTest, ADirectoryWalkFollowsLinksAndSkipsOtherManifests) {
  namespace fs = std::filesystem;
  const std::string dir = testing::MakeTempDir();
  fs::create_directories(dir + "/service");
  fs::create_directories(dir + "/shared");
  fs::copy_file("configs/canary/judge.yaml", dir + "/shared/judge.yaml");
  fs::create_directory_symlink("../shared", dir + "/service/shared");
  fs::create_directory_symlink("..", dir + "/service/up");  // a loop
  fs::create_symlink("gone.yaml", dir + "/service/dangling.yaml");
  const std::string deployment =
      Write(dir + "/service", "deployment.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n");

  auto files = ConfigFiles({dir + "/service"});
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> paths;
  for (const ConfigFile& file : *files) paths.push_back(file.path);
  // The judge once (through the link, not again through the loop), the
  // dangling link to be reported, the manifest to be skipped.
  EXPECT_EQ(paths, (std::vector<std::string>{
                       dir + "/service/dangling.yaml",
                       deployment,
                       dir + "/service/shared/judge.yaml",
                   }));

  std::ostringstream out, err;
  ConfigCheckFlags flags;
  flags.paths = {dir + "/service"};
  EXPECT_EQ(RunConfigCheck(flags, out, err), 2);  // the dangling link
  EXPECT_NE(out.str().find("skip ?      " + deployment +
                           ": a manifest of kind Deployment (apiVersion "
                           "apps/v1), not a phaseloop config"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("BAD  ?      " + dir +
                           "/service/dangling.yaml\n    cannot read"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("ok   judge  " + dir + "/service/shared/judge.yaml"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(err.str(),
            "2 config files: 1 valid, 1 not; 1 other tool's manifest "
            "skipped\n");

  fs::remove(dir + "/service/dangling.yaml");
  std::ostringstream json_out, json_err;
  flags.json = true;
  EXPECT_EQ(RunConfigCheck(flags, json_out, json_err), 0);
  EXPECT_NE(json_out.str().find("\"skipped\": true"), std::string::npos)
      << json_out.str();

  // Named on its own, the manifest is an error; an OpenSLO file is an SLO.
  const CheckedConfig named = CheckConfig(deployment, std::nullopt);
  EXPECT_TRUE(named.foreign);
  EXPECT_FALSE(named.status.ok());
  flags.paths = {deployment};
  flags.json = false;
  std::ostringstream named_out, named_err;
  EXPECT_EQ(RunConfigCheck(flags, named_out, named_err), 2);
  EXPECT_NE(named_out.str().find("BAD  ?"), std::string::npos)
      << named_out.str();
  const CheckedConfig slo = CheckConfig(
      Write(dir, "slo.yaml", "apiVersion: openslo/v1\nkind: Service\n"),
      std::nullopt);
  ASSERT_TRUE(slo.kind.has_value());
  EXPECT_EQ(*slo.kind, ConfigKind::kSlo);
  EXPECT_NE(slo.status.message().find("only kind: SLO is read"),
            std::string::npos)
      << slo.status;
}

}  // namespace
}  // namespace phaseloop::config_check
