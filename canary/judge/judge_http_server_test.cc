// The judge over real HTTP on an ephemeral loopback port, driven with the
// conventions of its callers: Argo Rollouts' web provider reads
// {$.result} and tests result.outcome == "Pass"; Flagger's webhooks pass on
// 2xx only.
#include "canary/judge/judge_http_server.h"

#include <httplib.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace phaseloop::canary {
namespace {

using Json = nlohmann::json;

// n evenly spread latencies around `median` (deterministic).
std::vector<double> Spread(int n, double median) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(median * (0.8 + 0.4 * ((i * 37) % n) / (n - 1)));
  }
  return out;
}

std::string Request(const std::vector<double>& baseline,
                    const std::vector<double>& canary) {
  return Json{{"metrics",
               {{"latency_ms", {{"baseline", baseline}, {"canary", canary}}}}}}
      .dump();
}

class JudgeHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = JudgeHttpServer::Start(JudgeConfig(), "127.0.0.1", 0);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  // POSTs `body` to `path`; the status, and the JSON answered.
  int Post(const std::string& path, const std::string& body, Json* json) {
    auto response = client_->Post(path.c_str(), body, "application/json");
    if (!response) {
      ADD_FAILURE() << "no response from " << path;
      return -1;
    }
    EXPECT_EQ(response->get_header_value("Content-Type"), "application/json")
        << path;
    *json = Json::parse(response->body, nullptr, false);
    EXPECT_FALSE(json->is_discarded()) << response->body;
    return response->status;
  }

  std::unique_ptr<JudgeHttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(JudgeHttpServerTest, ArgoReadsTheOutcomeOfEveryJudgement) {
  Json json;
  ASSERT_EQ(
      Post("/v1/judge", Request(Spread(100, 100), Spread(100, 100)), &json),
      200);
  EXPECT_EQ(json["result"]["outcome"], "Pass") << json.dump(2);
  EXPECT_EQ(json["result"]["score"], 100);
  const Json& metric = json["result"]["metrics"][0];
  EXPECT_EQ(metric["name"], "latency_ms");
  EXPECT_EQ(metric["baseline"]["count"], 100);
  EXPECT_EQ(metric["ratio"], 1);
  EXPECT_TRUE(metric["p_value"].is_number());

  // A canary 10 % slower: still 200 (a judgement), outcome Fail.
  std::vector<double> slow = Spread(100, 110);
  ASSERT_EQ(Post("/v1/judge", Request(Spread(100, 100), slow), &json), 200);
  EXPECT_EQ(json["result"]["outcome"], "Fail") << json.dump(2);
  EXPECT_EQ(json["result"]["metrics"][0]["outcome"], "Fail");
  EXPECT_NEAR(json["result"]["metrics"][0]["ratio"].get<double>(), 1.1, 1e-9);

  // Too few samples, and none at all.
  ASSERT_EQ(Post("/v1/judge", Request(Spread(10, 100), Spread(10, 100)), &json),
            200);
  EXPECT_EQ(json["result"]["outcome"], "Inconclusive");
  EXPECT_TRUE(json["result"]["metrics"][0]["p_value"].is_null());
  ASSERT_EQ(Post("/v1/judge", Request({}, Spread(100, 100)), &json), 200);
  EXPECT_EQ(json["result"]["outcome"], "Error");
  EXPECT_TRUE(absl::StrContains(json["result"]["reasons"][0].get<std::string>(),
                                "no data"))
      << json.dump(2);
}

TEST_F(JudgeHttpServerTest, FlaggerGatePassesOnTwoHundredOnly) {
  Json json;
  EXPECT_EQ(
      Post("/v1/gate", Request(Spread(100, 100), Spread(100, 100)), &json),
      200);
  EXPECT_EQ(
      Post("/v1/gate", Request(Spread(100, 100), Spread(100, 110)), &json),
      412);
  EXPECT_EQ(json["result"]["outcome"], "Fail");
  EXPECT_EQ(Post("/v1/gate", Request(Spread(10, 100), Spread(10, 100)), &json),
            412);
  EXPECT_EQ(json["result"]["outcome"], "Inconclusive");
  // Flagger's own envelope, the samples as a JSON string in its metadata.
  const Json envelope = {
      {"name", "podinfo"},
      {"namespace", "test"},
      {"phase", "Progressing"},
      {"metadata",
       {{"metrics",
         Json::parse(Request(Spread(100, 100), Spread(100, 100)))["metrics"]
             .dump()}}}};
  EXPECT_EQ(Post("/v1/gate", envelope.dump(), &json), 200) << json.dump(2);
  EXPECT_EQ(json["result"]["outcome"], "Pass");
}

TEST_F(JudgeHttpServerTest, BadRequestsAre400WithAClearMessage) {
  const std::pair<std::string, std::string> cases[] = {
      {"{not json", "request body: not valid JSON"},
      {"[1, 2]", "request body: must be a JSON object"},
      {"{}", "request body: has no \"metrics\""},
      {R"({"metrics": {"l": {"baseline": [1, "fast"], "canary": []}}})",
       "metrics.l.baseline[1]: expected a number, got \"fast\""},
      {R"({"metrics": {"l": {"canary": []}}})", "metrics.l.baseline: missing"},
      {R"({"metrics": {"l": {"baseline": [], "canary": [], "x": 1}}})",
       "metrics.l.x: unknown field"},
      {R"({"metadata": {"other": "1"}})", "metadata.metrics: missing"},
      // A key given twice: the last one won without a word.
      {R"({"metrics": {"l": {"baseline": [1], "baseline": [5], "canary": [1]}}})",
       "baseline: given twice"},
      {R"({"metrics": {"l": {"baseline": [1], "canary": [1]}, "l": {}}})",
       "l: given twice"},
  };
  for (const auto& [body, expected] : cases) {
    Json json;
    EXPECT_EQ(Post("/v1/judge", body, &json), 400) << body;
    EXPECT_TRUE(absl::StrContains(json["error"].get<std::string>(), expected))
        << body << " gave " << json.dump();
  }
}

TEST_F(JudgeHttpServerTest, OversizedBodyIs413AndOtherRoutesAreRefused) {
  Json json;
  EXPECT_EQ(Post("/v1/judge", std::string(kMaxRequestBytes + 1, ' '), &json),
            413);
  EXPECT_TRUE(
      absl::StrContains(json["error"].get<std::string>(), "request body over"))
      << json.dump();
  // A JSON body sent form-encoded (curl -d's default type) over httplib's
  // 8 KiB form limit: the answer names the header, not the 16 MB limit.
  auto form = client_->Post("/v1/judge", std::string(32768, ' '),
                            "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 413);
  EXPECT_TRUE(absl::StrContains(form->body, "Content-Type: application/json"))
      << form->body;
  auto get = client_->Get("/v1/judge");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  EXPECT_EQ(Post("/nowhere", "{}", &json), 404);
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST(JudgeHttpServer, BusyPortIsUnavailable) {
  auto first = JudgeHttpServer::Start(JudgeConfig(), "127.0.0.1", 0);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second =
      JudgeHttpServer::Start(JudgeConfig(), "127.0.0.1", (*first)->port());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(),
                                absl::StrCat("127.0.0.1:", (*first)->port())));
}

}  // namespace
}  // namespace phaseloop::canary
