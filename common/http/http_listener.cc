#include "common/http/http_listener.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::http {

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(
    std::unique_ptr<httplib::Server> server, const std::string& host, int port,
    absl::string_view purpose, absl::string_view flag) {
  std::unique_ptr<HttpListener> listener(new HttpListener());
  listener->server_ = std::move(server);
  httplib::Server& http = *listener->server_;
  http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (port == 0) {
    listener->port_ = http.bind_to_any_port(host);
  } else {
    listener->port_ = http.bind_to_port(host, port) ? port : -1;
  }
  if (listener->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen ", purpose, "on ", host, ":", port,
                     " (address in use or not local); choose another ", flag));
  }
  listener->thread_ = std::thread([&http] { http.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs: wait for it, so the
  // destructor always ends it.
  while (!http.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return listener;
}

HttpListener::~HttpListener() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace phaseloop::http
