#include "canary/load/http_connection.h"

#include <memory>
#include <string>

#include "canary/load/load_test_server.h"
#include "gtest/gtest.h"

namespace phaseloop::canary::load {
namespace {

Clock::time_point Soon() { return Clock::now() + std::chrono::seconds(30); }

Endpoint Loopback(int port) {
  auto endpoint = ResolveEndpoint("127.0.0.1", port);
  EXPECT_TRUE(endpoint.ok()) << endpoint.status();
  return *endpoint;
}

TEST(HttpConnectionTest, PostsAndKeepsTheConnectionAlive) {
  auto server = LoadTestServer::Start(/*keep_alive_max=*/100);
  ASSERT_TRUE(server.ok()) << server.status();
  HttpConnection connection(Loopback((*server)->port()));
  for (int i = 0; i < 10; ++i) {
    const std::string body(100 + i, 'x');
    const HttpOutcome outcome =
        connection.Post("/v1/handle/echo", body, Soon());
    EXPECT_EQ(outcome.status, 200);
    EXPECT_EQ(outcome.error, "");
    EXPECT_EQ(outcome.body_bytes, static_cast<int64_t>(body.size()));
  }
  EXPECT_EQ(connection.connects(), 1);
  EXPECT_EQ((*server)->Received("echo"), 10);
}

// cpp-httplib closes a connection after 5 requests, saying so
// (Connection: close): the client reconnects, and every request succeeds.
TEST(HttpConnectionTest, ReconnectsWhenTheServerSaysClose) {
  auto server = LoadTestServer::Start(/*keep_alive_max=*/5);
  ASSERT_TRUE(server.ok()) << server.status();
  HttpConnection connection(Loopback((*server)->port()));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(connection.Post("/v1/handle/echo", "abc", Soon()).status, 200);
  }
  EXPECT_EQ(connection.connects(), 2);
}

// A server that answers with keep-alive and then closes while idle: the
// next request, which finds the connection closed before any answer, is
// sent again on a new connection.
TEST(HttpConnectionTest, ResendsOnceWhenAnIdleConnectionWasClosed) {
  auto server =
      RawTcpServer::Start("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  ASSERT_TRUE(server.ok()) << server.status();
  HttpConnection connection(Loopback((*server)->port()));
  for (int i = 0; i < 3; ++i) {
    const HttpOutcome outcome = connection.Post("/v1/handle/a", "body", Soon());
    EXPECT_EQ(outcome.status, 200) << outcome.error;
    EXPECT_EQ(outcome.body_bytes, 2);
  }
  EXPECT_EQ((*server)->connections(), 3);
}

TEST(HttpConnectionTest, ReadsChunkedAndCloseDelimitedBodies) {
  auto chunked = RawTcpServer::Start(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n");
  ASSERT_TRUE(chunked.ok());
  HttpConnection a(Loopback((*chunked)->port()));
  HttpOutcome outcome = a.Post("/v1/handle/a", "", Soon());
  EXPECT_EQ(outcome.status, 200) << outcome.error;
  EXPECT_EQ(outcome.body_bytes, 11);

  auto until_close = RawTcpServer::Start("HTTP/1.0 201 Created\r\n\r\nabcdef");
  ASSERT_TRUE(until_close.ok());
  HttpConnection b(Loopback((*until_close)->port()));
  outcome = b.Post("/v1/handle/a", "", Soon());
  EXPECT_EQ(outcome.status, 201) << outcome.error;
  EXPECT_EQ(outcome.body_bytes, 6);
  EXPECT_FALSE(b.connected());
}

TEST(HttpConnectionTest, NamesWhatWentWrong) {
  auto garbage = RawTcpServer::Start("SMTP ready\r\n\r\n");
  ASSERT_TRUE(garbage.ok());
  HttpConnection a(Loopback((*garbage)->port()));
  EXPECT_EQ(a.Post("/v1/handle/a", "x", Soon()).error, kErrorBadResponse);

  auto short_body =
      RawTcpServer::Start("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
  ASSERT_TRUE(short_body.ok());
  HttpConnection b(Loopback((*short_body)->port()));
  EXPECT_EQ(b.Post("/v1/handle/a", "x", Soon()).error, kErrorClosed);

  auto server = LoadTestServer::Start();
  ASSERT_TRUE(server.ok());
  HttpConnection c(Loopback((*server)->port()));
  const HttpOutcome failed = c.Post("/v1/handle/fail", "x", Soon());
  EXPECT_EQ(failed.status, 500);
  EXPECT_EQ(failed.error, "http_500");
  EXPECT_TRUE(c.connected());  // a 500 keeps the connection

  RefusingPort refusing;
  HttpConnection d(Loopback(refusing.port()));
  EXPECT_EQ(d.Post("/v1/handle/a", "x", Soon()).error, kErrorConnectRefused);

  const HttpOutcome timed_out = c.Post(
      "/v1/handle/hang", "x", Clock::now() + std::chrono::milliseconds(20));
  EXPECT_EQ(timed_out.error, kErrorTimeout);
  EXPECT_FALSE(c.connected());
}

TEST(HttpConnectionTest, UnresolvableHostIsNamed) {
  auto endpoint = ResolveEndpoint("no-such-host.invalid", 80);
  ASSERT_FALSE(endpoint.ok());
  EXPECT_NE(endpoint.status().message().find("no-such-host.invalid"),
            std::string::npos);
}

}  // namespace
}  // namespace phaseloop::canary::load
