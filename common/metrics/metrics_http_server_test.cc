#include "common/metrics/metrics_http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>

namespace phaseloop::metrics {
namespace {

TEST(MetricsHttpServerTest, ServesMetricsOverRealHttp) {
  MetricsRegistry registry;
  Counter& rewards =
      registry.AddCounter("phaseloop_rewards_emitted_total", "Rewards emitted.",
                          {{"service", "demo \"svc\""}});
  rewards.Increment(7);
  auto server = MetricsHttpServer::Start(registry, "127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);

  httplib::Client client("127.0.0.1", (*server)->port());
  auto response = client.Get("/metrics");
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(
      response->body,
      "# HELP phaseloop_rewards_emitted_total Rewards emitted.\n"
      "# TYPE phaseloop_rewards_emitted_total counter\n"
      "phaseloop_rewards_emitted_total{service=\"demo \\\"svc\\\"\"} 7\n");

  // Values are read at scrape time.
  rewards.Increment();
  response = client.Get("/metrics");
  ASSERT_TRUE(response);
  EXPECT_NE(response->body.find("} 8\n"), std::string::npos) << response->body;

  response = client.Get("/");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  response = client.Get("/metrics/extra");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  response = client.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 405);
}

TEST(MetricsHttpServerTest, StopsInTheDestructorAndFreesThePort) {
  MetricsRegistry registry;
  int port = 0;
  {
    auto server = MetricsHttpServer::Start(registry, "127.0.0.1", 0);
    ASSERT_TRUE(server.ok()) << server.status();
    port = (*server)->port();
    // A second server cannot take the same port.
    auto clash = MetricsHttpServer::Start(registry, "127.0.0.1", port);
    EXPECT_FALSE(clash.ok());
    EXPECT_NE(clash.status().message().find(std::to_string(port)),
              std::string::npos);
  }
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1);
  EXPECT_FALSE(client.Get("/metrics"));
  // And the port can be listened on again.
  auto again = MetricsHttpServer::Start(registry, "127.0.0.1", port);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(MetricsHttpServerTest, RejectsBadPorts) {
  MetricsRegistry registry;
  EXPECT_FALSE(MetricsHttpServer::Start(registry, "127.0.0.1", 70000).ok());
  EXPECT_FALSE(
      MetricsHttpServer::Start(registry, "no-such-host.invalid", 0).ok());
}

}  // namespace
}  // namespace phaseloop::metrics
