#ifndef PHASELOOP_COMMON_HTTP_HTTP_LISTENER_H_
#define PHASELOOP_COMMON_HTTP_HTTP_LISTENER_H_

// One cpp-httplib server listening on loopback (or any host) on a thread of
// its own, for the project's small HTTP endpoints (/metrics, the canary
// judge): binds with SO_REUSEADDR but not httplib's default SO_REUSEPORT
// (which would let two servers share a port silently), runs the accept loop,
// and stops and joins it when destroyed. Routes are set on the server
// before Start.

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace httplib {
class Server;
}

namespace phaseloop::http {

class HttpListener {
 public:
  // Listens on host:port (port 0: any free port, see port()) and returns
  // once the accept loop runs. Unavailable when it cannot bind: "cannot
  // listen <purpose>on HOST:PORT (address in use or not local); choose
  // another <flag>" (purpose "" or e.g. "for /metrics ").
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(
      std::unique_ptr<httplib::Server> server, const std::string& host,
      int port, absl::string_view purpose, absl::string_view flag);

  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  int port() const { return port_; }

 private:
  HttpListener() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace phaseloop::http

#endif  // PHASELOOP_COMMON_HTTP_HTTP_LISTENER_H_
