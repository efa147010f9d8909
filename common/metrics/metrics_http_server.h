#ifndef PHASELOOP_COMMON_METRICS_METRICS_HTTP_SERVER_H_
#define PHASELOOP_COMMON_METRICS_METRICS_HTTP_SERVER_H_

// Serves a MetricsRegistry over HTTP for Prometheus to scrape: GET /metrics
// answers the registry's text (Content-Type "text/plain; version=0.0.4;
// charset=utf-8"); every other path is 404, other methods 405 on /metrics.
//
// Ownership and threading: the registry must outlive the server. The server
// runs on its own threads (cpp-httplib's pool); Start returns once it is
// listening. The destructor stops it and waits for its threads.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/http/http_listener.h"
#include "common/metrics/metrics_registry.h"

namespace httplib {
class Server;
}

namespace phaseloop::metrics {

class MetricsHttpServer {
 public:
  // Listens on host:port (port 0: any free port, see port()). Unavailable
  // naming the address when it cannot bind (in use, bad host).
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const MetricsRegistry& registry, const std::string& host, int port);

  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // The port it listens on.
  int port() const { return listener_->port(); }

 private:
  MetricsHttpServer() = default;

  std::unique_ptr<httplib::Server> server_;  // until the listener has it
  std::unique_ptr<http::HttpListener> listener_;
};

}  // namespace phaseloop::metrics

#endif  // PHASELOOP_COMMON_METRICS_METRICS_HTTP_SERVER_H_
