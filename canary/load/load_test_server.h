#ifndef PHASELOOP_CANARY_LOAD_LOAD_TEST_SERVER_H_
#define PHASELOOP_CANARY_LOAD_LOAD_TEST_SERVER_H_

// Test-only peers of the load generator, on loopback ephemeral ports:
// - LoadTestServer, a real HTTP/1.1 server (cpp-httplib through
//   common/http/http_listener) answering POST /v1/handle/<kind> by kind:
//   echo (200, the body back), fail (500), stall (200; the n-th one sleeps
//   first, see StallNth), hang (waits until ReleaseHangs or destruction),
//   anything else 404;
// - RawTcpServer, a socket server that reads one request per connection and
//   answers fixed bytes (or nothing) and closes: for what a well-behaved
//   server does not do.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace httplib {
class Server;
}
namespace phaseloop::http {
class HttpListener;
}

namespace phaseloop::canary::load {

class LoadTestServer {
 public:
  // `keep_alive_max`: requests per connection before the server closes it
  // (cpp-httplib's default is 5).
  static absl::StatusOr<std::unique_ptr<LoadTestServer>> Start(
      int keep_alive_max = 5);
  ~LoadTestServer();

  int port() const;
  // Requests of `kind` received so far.
  int64_t Received(const std::string& kind) const;
  // The n-th stall request (1-based) sleeps `stall` before answering.
  void StallNth(int64_t n, std::chrono::milliseconds stall);
  void ReleaseHangs();

 private:
  LoadTestServer() = default;

  mutable std::mutex mutex_;
  std::condition_variable released_;
  bool hangs_released_ = false;              // guarded by mutex_
  std::map<std::string, int64_t> received_;  // guarded by mutex_
  int64_t stall_nth_ = 0;                    // guarded by mutex_
  std::chrono::milliseconds stall_{0};       // guarded by mutex_
  std::unique_ptr<http::HttpListener> listener_;
};

class RawTcpServer {
 public:
  // Per connection: reads the request head and its Content-Length body,
  // writes `response` (nothing when empty) and closes.
  static absl::StatusOr<std::unique_ptr<RawTcpServer>> Start(
      std::string response);
  ~RawTcpServer();

  int port() const { return port_; }
  int64_t connections() const { return connections_.load(); }

 private:
  RawTcpServer() = default;
  void Serve();

  std::string response_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> connections_{0};
  std::thread thread_;
};

// A loopback port that refuses connections: bound, never listening, held
// while the object lives.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_LOAD_TEST_SERVER_H_
