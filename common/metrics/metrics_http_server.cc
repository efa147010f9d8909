#include "common/metrics/metrics_http_server.h"

#include <httplib.h>

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

  absl::StatusOr<std::unique_ptr<http::HttpListener>> listener =
      http::HttpListener::Start(std::move(server->server_), host, port,
                                "for /metrics ", "--metrics-port");
  if (!listener.ok()) return listener.status();
  server->listener_ = *std::move(listener);
  return server;
}

MetricsHttpServer::~MetricsHttpServer() = default;

}  // namespace phaseloop::metrics
