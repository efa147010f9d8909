#include "canary/service/service_server.h"

#include <httplib.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "canary/service/check_requests.h"
#include "canary/service/handler_library.h"
#include "common/metrics/metrics_registry.h"
#include "gtest/gtest.h"
#include "reward_engine/sli/sli_recorder.h"

namespace phaseloop::canary {
namespace {

// handler.c with `roundtrip` of 64 KiB or more failing (a handler error);
// every other request is the demo handler's.
constexpr char kHandler[] = "canary/service/libfailing_handler.so";

class ServiceServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = HandlerLibrary::Load(kHandler);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *std::move(library);
    sli::SliRecorderOptions options;
    options.service = "demo";
    options.group = "canary";
    options.instance = "test:1";
    options.deployment_id = "d1";
    options.policy_version = "p1";
    options.window_length_ms = 1000;
    auto recorder = sli::SliRecorder::Create(options);
    ASSERT_TRUE(recorder.ok()) << recorder.status();
    recorder_ = *std::move(recorder);
    ServiceServerOptions server_options;
    server_options.threads = 2;
    server_options.refresh_metrics = [this] { ++refreshes_; };
    auto server = ServiceServer::Start(library_.get(), recorder_.get(),
                                       &registry_, server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  std::unique_ptr<HandlerLibrary> library_;
  std::unique_ptr<sli::SliRecorder> recorder_;
  metrics::MetricsRegistry registry_;
  std::unique_ptr<ServiceServer> server_;
  int refreshes_ = 0;
};

TEST_F(ServiceServerTest, ServesRecordsAndCounts) {
  httplib::Client client("127.0.0.1", server_->port());
  // One keep-alive connection for all of them, past cpp-httplib's default
  // of 5 requests per connection.
  client.set_keep_alive(true);
  const std::string text = TextPayload(1, 4096);
  for (int i = 0; i < 7; ++i) {
    auto crc =
        client.Post("/v1/handle/crc32", text, "application/octet-stream");
    ASSERT_TRUE(crc) << httplib::to_string(crc.error());
    EXPECT_EQ(crc->status, 200);
    EXPECT_EQ(crc->body, library_->Handle("crc32", text).body);
    EXPECT_EQ(crc->get_header_value("Content-Type"),
              "application/octet-stream");
  }
  auto deflated = client.Post("/v1/handle/deflate", text, "text/plain");
  ASSERT_TRUE(deflated);
  EXPECT_EQ(deflated->status, 200);
  EXPECT_EQ(deflated->body, library_->Handle("deflate", text).body);

  auto failed = client.Post("/v1/handle/roundtrip", TextPayload(1, 65536),
                            "application/octet-stream");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 500);
  auto unknown = client.Post("/v1/handle/gzip", text, "text/plain");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_TRUE(absl::StrContains(unknown->body, "deflate, roundtrip, crc32"))
      << unknown->body;
  // curl -d sends form bodies, which cpp-httplib caps at 8 KiB: the
  // answer says what to send instead.
  auto form = client.Post("/v1/handle/crc32", std::string(9000, 'a'),
                          "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 413);
  EXPECT_TRUE(absl::StrContains(form->body, "application/octet-stream"))
      << form->body;
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "ok\n");

  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(refreshes_, 1);
  for (const char* line :
       {"phaseloop_service_requests_total{code=\"200\",kind=\"crc32\"} 7",
        "phaseloop_service_requests_total{code=\"200\",kind=\"deflate\"} 1",
        "phaseloop_service_requests_total{code=\"500\",kind=\"roundtrip\"} 1",
        "phaseloop_service_requests_total{code=\"404\",kind=\"other\"} 1",
        "phaseloop_service_request_errors_total{kind=\"roundtrip\"} 1",
        "phaseloop_service_request_seconds_count{kind=\"crc32\"} 7"}) {
    EXPECT_TRUE(absl::StrContains(metrics->body, line)) << line << "\n"
                                                        << metrics->body;
  }

  // Stopping finishes what was in flight; every served request (not the
  // 404) is in the SLI, the 500 as an error.
  server_.reset();
  int64_t count = 0, errors = 0;
  for (const v1::SliWindow& window : recorder_->CloseAllWindows()) {
    count += window.count();
    errors += window.error_count();
    EXPECT_EQ(window.service(), "demo");
  }
  EXPECT_EQ(count, 9);
  EXPECT_EQ(errors, 1);
}

TEST_F(ServiceServerTest, RefusesZeroThreadsAndABusyPort) {
  ServiceServerOptions options;
  options.threads = 0;
  EXPECT_EQ(
      ServiceServer::Start(library_.get(), recorder_.get(), &registry_, options)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  options.threads = 1;
  options.port = server_->port();
  auto busy = ServiceServer::Start(library_.get(), recorder_.get(), &registry_,
                                   options);
  ASSERT_FALSE(busy.ok());
  EXPECT_TRUE(absl::StrContains(busy.status().message(), "--listen"))
      << busy.status();
}

}  // namespace
}  // namespace phaseloop::canary
