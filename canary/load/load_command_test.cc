#include "canary/load/load_command.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "canary/load/load_test_server.h"
#include "gtest/gtest.h"

namespace phaseloop::canary::load {
namespace {

class LoadCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = LoadTestServer::Start(1000);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    flags_.targets = {absl::StrCat("baseline=127.0.0.1:", server_->port())};
    flags_.progress_interval_s = 0.01;
  }

  int Run() {
    out_.str("");
    err_.str("");
    return RunLoad(flags_, out_, err_, nullptr);
  }

  std::unique_ptr<LoadTestServer> server_;
  LoadFlags flags_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(LoadCommandTest, RunsFromFlagsAndReportsJson) {
  flags_.rate = 100;
  flags_.max_requests = 20;
  flags_.mix = "echo:1:100-200";
  flags_.json = true;
  ASSERT_EQ(Run(), 0) << err_.str();
  const auto json = nlohmann::json::parse(out_.str());
  EXPECT_EQ(json["overall"]["ok"], 20);
  EXPECT_EQ(json["overall"]["error_count"], 0);
  EXPECT_EQ(json["targets"][0]["name"], "baseline");
  EXPECT_EQ(json["targets"][0]["intended"], 20);
  EXPECT_GT(json["targets"][0]["latency_ms"]["p95"].get<double>(), 0);
  EXPECT_EQ(json["spec"]["mix"][0]["max_payload_bytes"], 200);
  EXPECT_EQ(server_->Received("echo"), 20);
  // Progress lines on stderr while it ran (every 10 ms here).
  EXPECT_NE(err_.str().find("sent "), std::string::npos) << err_.str();
}

TEST_F(LoadCommandTest, PrintsATable) {
  flags_.rate = 500;
  flags_.max_requests = 5;
  flags_.mix = "echo:1:10";
  ASSERT_EQ(Run(), 0) << err_.str();
  EXPECT_NE(out_.str().find("baseline"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("overall"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("late starts"), std::string::npos) << out_.str();
}

// The sample config's kinds are the demo service's; this server answers
// them 404. The errors are reported and the exit is 0, unless
// --max-error-rate says otherwise.
TEST_F(LoadCommandTest, ConfigWithOverridesAndTheErrorRateLimit) {
  flags_.config = "configs/canary/load.yaml";
  flags_.max_requests = 10;
  flags_.rate = 1000;
  ASSERT_EQ(Run(), 0) << err_.str();
  EXPECT_NE(out_.str().find("errors of baseline: http_404 10"),
            std::string::npos)
      << out_.str();
  flags_.max_error_rate = 0.5;
  EXPECT_EQ(Run(), 1);
  EXPECT_NE(err_.str().find("above --max-error-rate 0.5"), std::string::npos)
      << err_.str();
}

TEST_F(LoadCommandTest, BadInputIsExitTwoNamingIt) {
  struct Case {
    std::function<void(LoadFlags&)> change;
    std::string message;
  };
  const Case cases[] = {
      {[](LoadFlags& f) { f.targets.clear(); }, "no target"},
      {[](LoadFlags& f) { f.targets = {"baseline:80"}; }, "baseline:80"},
      {[](LoadFlags& f) { f.rate.reset(); }, "give --config FILE"},
      {[](LoadFlags& f) { f.mix = "echo:1"; }, "--mix \"echo:1\""},
      {[](LoadFlags& f) { f.mix = "echo:x:10"; }, "--mix \"echo:x:10\""},
      {[](LoadFlags& f) { f.rate = -5; }, "rate: -5"},
      {[](LoadFlags& f) { f.arrival = "bursty"; }, "--arrival \"bursty\""},
      {[](LoadFlags& f) { f.max_in_flight = 0; }, "--max-in-flight 0"},
      {[](LoadFlags& f) { f.max_error_rate = 2; }, "--max-error-rate 2"},
      {[](LoadFlags& f) { f.config = "/nonexistent/load.yaml"; },
       "/nonexistent/load.yaml"},
      {[](LoadFlags& f) { f.targets = {"b=no-such-host.invalid:80"}; },
       "no-such-host.invalid"},
  };
  for (const Case& c : cases) {
    flags_ = LoadFlags();
    flags_.targets = {absl::StrCat("baseline=127.0.0.1:", server_->port())};
    flags_.rate = 100;
    flags_.max_requests = 1;
    flags_.mix = "echo:1:10";
    c.change(flags_);
    EXPECT_EQ(Run(), 2) << c.message << ": " << err_.str();
    EXPECT_NE(err_.str().find(c.message), std::string::npos) << err_.str();
    EXPECT_NE(err_.str().find("phaseloop canary load: "), std::string::npos);
  }
  EXPECT_EQ(server_->Received("echo"), 0);
}

}  // namespace
}  // namespace phaseloop::canary::load
