#include "canary/controller/service_config.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

constexpr char kDemo[] = "configs/services/demo.yaml";

// The shipped demo service's text with `from` replaced by `to` (which must
// occur), as dir/services/svc.yaml beside copies of the files it names.
std::string WriteEditedDemo(const std::string& from, const std::string& to) {
  const std::string dir = testing::MakeTempDir();
  std::filesystem::create_directories(dir + "/services");
  std::filesystem::create_directories(dir + "/canary");
  std::filesystem::copy_file("configs/canary/rollout_judge.yaml",
                             dir + "/canary/rollout_judge.yaml");
  std::filesystem::copy_file("configs/error_budget_policy.yaml",
                             dir + "/error_budget_policy.yaml");
  std::string text = testing::ReadFileOrEmpty(kDemo);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  const std::string path = dir + "/services/svc.yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(ServiceConfigTest, TheShippedDemoServiceLoads) {
  auto config = LoadServiceConfig(kDemo);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->service, "demo-service");
  EXPECT_EQ(config->slo_dir, "configs/services/../slo");
  EXPECT_EQ(config->handler_zlib, "debian:zlib");
  EXPECT_EQ(config->handler_opt_level, "O3");
  EXPECT_EQ(config->instance_threads, 2);
  EXPECT_EQ(config->sli_window_ms, 1000);
  EXPECT_EQ(config->reward_window_ms, 2000);
  EXPECT_EQ(config->reward_lateness_ms, 1000);
  EXPECT_EQ(config->reward_close_idle_ms, 1500);
  EXPECT_EQ(config->reward_idle_ms, 3000);
  EXPECT_EQ(config->load.duration_s, 0) << "a canary's load runs its steps";
  EXPECT_EQ(config->rollout.steps.size(), 3u);
  EXPECT_FALSE(config->budget_policy.tiers.empty());
}

// Every field the file documents reaches the config (rewards.idle_ms was
// once accepted and never read).
TEST(ServiceConfigTest, EveryRewardsFieldIsRead) {
  auto config = LoadServiceConfig(WriteEditedDemo(
      "rewards:\n  window_ms: 2000\n  lateness_ms: 1000\n  close_idle_ms: "
      "1500\n  idle_ms: 3000\n",
      "rewards:\n  window_ms: 4000\n  lateness_ms: 500\n  close_idle_ms: "
      "2500\n  idle_ms: 7000\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->reward_window_ms, 4000);
  EXPECT_EQ(config->reward_lateness_ms, 500);
  EXPECT_EQ(config->reward_close_idle_ms, 2500);
  EXPECT_EQ(config->reward_idle_ms, 7000);
}

TEST(ServiceConfigTest, ErrorsNameTheFileTheFieldAndTheDocs) {
  const struct {
    const char* from;
    const char* to;
    const char* expected;
  } cases[] = {
      {"service: demo-service", "servise: demo-service",
       "servise: unknown field"},
      {"opt_level: O3", "opt_level: O0",
       "handler.opt_level: \"O0\" is not a choice; use O1, O2 (a speed "
       "policy acts at O2 and O3) or O3"},
      {"  threads: 2\n", "  threads: 2.5\n",
       "instances.threads: expected a whole number, got \"2.5\""},
      {"  idle_ms: 3000", "  idle_ms: -1",
       "rewards.idle_ms: -1 is outside [0, 3600000]"},
      {"  window_ms: 2000", "  window_ms: 2500",
       "rewards.window_ms: 2500 is not a multiple of "
       "instances.sli_window_ms 1000"},
      {"  zlib: debian:zlib", "  zlib: [a]",
       "handler.zlib: expected a non-empty string"},
      {"  rate: 400\n", "  rate: 400\n  duration_s: 5\n",
       "load: leave duration_s and max_requests out"},
      {"budget_policy: ../error_budget_policy.yaml",
       "budget_policy: ../missing.yaml", "budget_policy: cannot read "},
      {"  warmup_s: 4", "  warmup_s: 4000",
       "rollout.warmup_s: 4000 is outside [0, 3600]"},
      // Every request of an unknown kind was a 404; the run aborted later.
      {"    - kind: deflate", "    - kind: deflat",
       "load.mix[0].kind: 'deflat' is not a kind the demo handler serves "
       "(deflate, roundtrip, crc32)"},
  };
  for (const auto& c : cases) {
    const std::string path = WriteEditedDemo(c.from, c.to);
    auto config = LoadServiceConfig(path);
    ASSERT_FALSE(config.ok()) << c.to;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(config.status().message());
    EXPECT_NE(message.find(absl::StrCat(path, ": ", c.expected)),
              std::string::npos)
        << message;
    // A file the service names says where its own fields are documented.
    const std::string docs = absl::StartsWith(c.expected, "budget_policy:")
                                 ? "(configs/error_budget_policy.yaml is an "
                                   "example)"
                                 : "(configs/services/demo.yaml documents "
                                   "every field)";
    EXPECT_NE(message.find(docs), std::string::npos) << message;
    int notes = 0;
    for (const char* note : {" documents every field)", " is an example)"}) {
      for (size_t at = message.find(note); at != std::string::npos;
           at = message.find(note, at + 1)) {
        ++notes;
      }
    }
    EXPECT_EQ(notes, 1) << "one note on where fields are documented: "
                        << message;
  }
}

TEST(ServiceConfigTest, AMissingFileIsNotFound) {
  auto config = LoadServiceConfig("/nonexistent/svc.yaml");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find(
                "cannot read /nonexistent/svc.yaml; give an existing file "
                "(configs/services/demo.yaml is an example)"),
            std::string::npos)
      << config.status();
}

}  // namespace
}  // namespace phaseloop::canary
