#ifndef PHASELOOP_CANARY_SERVICE_SERVICE_SERVER_H_
#define PHASELOOP_CANARY_SERVICE_SERVICE_SERVER_H_

// The demo service's HTTP host (the wire protocol every load generator
// follows), on common/http's listener:
//   POST /v1/handle/<kind>  the body through the handler library:
//                           200 application/octet-stream with its output,
//                           404 unknown kind, 400 bad payload (over the
//                           handler's limit), 500 handler failure;
//   GET  /healthz           200 "ok";
//   GET  /metrics           Prometheus text of the registry.
// Every /v1/handle request that reached the handler with a known kind is
// recorded in the SliRecorder: its latency from the request fully read
// (the handler is called) to the response written, an error when the
// answer is 500. Requests refused with 4xx are the client's: counted in
// /metrics by code, never in the SLI.
//
// Metrics: phaseloop_service_requests_total{kind,code},
// phaseloop_service_request_errors_total{kind},
// phaseloop_service_request_seconds_sum / _count (served requests), and
// what `refresh_metrics` sets just before each scrape.
//
// Threading: cpp-httplib's pool of `threads` workers; a keep-alive
// connection holds one worker while open, so give at least as many threads
// as the load keeps connections. The destructor stops accepting, lets
// every request being served finish (its latency recorded), and joins.
// The handler, recorder and registry must outlive the server.

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "canary/service/handler_library.h"
#include "common/http/http_listener.h"
#include "common/metrics/metrics_registry.h"
#include "reward_engine/sli/sli_recorder.h"

namespace phaseloop::canary {

inline constexpr size_t kMaxPayloadBytes = 64 << 20;  // the handler's limit
inline constexpr int kServiceIoTimeoutSeconds = 30;

struct ServiceServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  int threads = 8;
  // Called before each /metrics render (e.g. to copy delivery counts into
  // gauges); may be empty.
  std::function<void()> refresh_metrics;
  // Fault injection for benchmarks (`canary serve --slowdown`): after each
  // handler call, busy-wait this fraction of the call's own time, so the
  // instance is that much slower in CPU as a slower build would be. 0: off.
  double slowdown = 0;
};

class ServiceServer {
 public:
  // Unavailable naming the address when it cannot bind; InvalidArgument
  // for threads < 1.
  static absl::StatusOr<std::unique_ptr<ServiceServer>> Start(
      const HandlerLibrary* handler, sli::SliRecorder* recorder,
      metrics::MetricsRegistry* registry, ServiceServerOptions options);
  ~ServiceServer();
  ServiceServer(const ServiceServer&) = delete;
  ServiceServer& operator=(const ServiceServer&) = delete;

  int port() const { return listener_->port(); }

 private:
  struct Routes;
  ServiceServer() = default;

  std::unique_ptr<Routes> routes_;
  std::unique_ptr<http::HttpListener> listener_;  // last: stops first
};

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_SERVICE_SERVICE_SERVER_H_
