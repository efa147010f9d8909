#include "canary/load/load_test_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/http/http_listener.h"

namespace phaseloop::canary::load {
namespace {

// A loopback socket bound to an ephemeral port; its port in `port`.
int BindLoopback(int& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return -1;
  }
  port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadTestServer>> LoadTestServer::Start(
    int keep_alive_max) {
  std::unique_ptr<LoadTestServer> server(new LoadTestServer());
  auto http = std::make_unique<httplib::Server>();
  // One thread per kept-alive connection: more than any test keeps open.
  http->new_task_queue = [] { return new httplib::ThreadPool(64); };
  http->set_keep_alive_max_count(keep_alive_max);
  // Without it the body, written after the head, waits for the client's
  // delayed ACK (40 ms on Linux): the Nagle stall every HTTP server avoids.
  http->set_tcp_nodelay(true);
  LoadTestServer* self = server.get();
  http->Post(
      R"(/v1/handle/([A-Za-z0-9_.-]+))",
      [self](const httplib::Request& request, httplib::Response& response) {
        const std::string kind = request.matches[1];
        std::unique_lock<std::mutex> lock(self->mutex_);
        const int64_t n = ++self->received_[kind];
        if (kind == "echo") {
          response.set_content(request.body, "application/octet-stream");
        } else if (kind == "fail") {
          response.status = 500;
          response.set_content("handler failed", "text/plain");
        } else if (kind == "stall") {
          if (n == self->stall_nth_) {
            const auto stall = self->stall_;
            lock.unlock();
            std::this_thread::sleep_for(stall);
          }
          response.set_content("ok", "text/plain");
        } else if (kind == "hang") {
          self->released_.wait(lock, [self] { return self->hangs_released_; });
          response.set_content("late", "text/plain");
        } else {
          response.status = 404;
        }
      });
  auto listener = http::HttpListener::Start(std::move(http), "127.0.0.1", 0,
                                            "for the load test server ", "");
  if (!listener.ok()) return listener.status();
  server->listener_ = *std::move(listener);
  return server;
}

LoadTestServer::~LoadTestServer() {
  ReleaseHangs();
  listener_.reset();
}

int LoadTestServer::port() const { return listener_->port(); }

int64_t LoadTestServer::Received(const std::string& kind) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = received_.find(kind);
  return it == received_.end() ? 0 : it->second;
}

void LoadTestServer::StallNth(int64_t n, std::chrono::milliseconds stall) {
  std::lock_guard<std::mutex> lock(mutex_);
  stall_nth_ = n;
  stall_ = stall;
}

void LoadTestServer::ReleaseHangs() {
  std::lock_guard<std::mutex> lock(mutex_);
  hangs_released_ = true;
  released_.notify_all();
}

absl::StatusOr<std::unique_ptr<RawTcpServer>> RawTcpServer::Start(
    std::string response) {
  std::unique_ptr<RawTcpServer> server(new RawTcpServer());
  server->response_ = std::move(response);
  server->listen_fd_ = BindLoopback(server->port_);
  if (server->listen_fd_ < 0 || listen(server->listen_fd_, 64) != 0) {
    return absl::UnavailableError("raw test server: cannot listen on loopback");
  }
  server->thread_ = std::thread([raw = server.get()] { raw->Serve(); });
  return server;
}

RawTcpServer::~RawTcpServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void RawTcpServer::Serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++connections_;
    // Read the head and the Content-Length body.
    std::string in;
    char chunk[4096];
    size_t want = std::string::npos;
    while (in.size() < want) {
      pollfd r{fd, POLLIN, 0};
      if (poll(&r, 1, 1000) <= 0) break;
      const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) break;
      in.append(chunk, static_cast<size_t>(n));
      const size_t head_end = in.find("\r\n\r\n");
      if (want == std::string::npos && head_end != std::string::npos) {
        const std::string head = absl::AsciiStrToLower(in.substr(0, head_end));
        const size_t at = head.find("content-length:");
        size_t length = 0;
        if (at != std::string::npos) {
          const size_t end = head.find("\r\n", at);
          absl::SimpleAtoi(
              absl::StripAsciiWhitespace(head.substr(at + 15, end - at - 15)),
              &length);
        }
        want = head_end + 4 + length;
      }
    }
    if (!response_.empty()) {
      send(fd, response_.data(), response_.size(), MSG_NOSIGNAL);
    }
    close(fd);
  }
}

RefusingPort::RefusingPort() { fd_ = BindLoopback(port_); }

RefusingPort::~RefusingPort() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace phaseloop::canary::load
