#include "common/metrics/metrics_http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::metrics {

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const MetricsRegistry& registry, const std::string& host, int port) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metrics port ", port, " is outside 0..65535 (0: any free port)"));
  }
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer());
  server->server_ = std::make_unique<httplib::Server>();
  httplib::Server& http = *server->server_;
  http.Get("/metrics",
           [&registry](const httplib::Request&, httplib::Response& response) {
             response.set_content(registry.RenderPrometheusText(),
                                  "text/plain; version=0.0.4; charset=utf-8");
           });
  auto not_allowed = [](const httplib::Request& request,
                        httplib::Response& response) {
    if (request.path == "/metrics") {
      response.status = 405;
      response.set_header("Allow", "GET");
    } else {
      response.status = 404;
    }
  };
  http.Post("/metrics", not_allowed);
  http.Put("/metrics", not_allowed);
  http.Delete("/metrics", not_allowed);

  // SO_REUSEADDR (restart right after a previous run) but not httplib's
  // default SO_REUSEPORT, which would let two servers share a port silently.
  http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (port == 0) {
    server->port_ = http.bind_to_any_port(host);
  } else {
    server->port_ = http.bind_to_port(host, port) ? port : -1;
  }
  if (server->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for /metrics on ", host, ":", port,
        " (address in use or not local); choose another --metrics-port"));
  }
  server->thread_ = std::thread([&http] { http.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs: wait for it, so the
  // destructor always ends it.
  while (!http.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace phaseloop::metrics
