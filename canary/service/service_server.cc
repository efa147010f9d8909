#include "canary/service/service_server.h"

#include <httplib.h>

#include <chrono>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace phaseloop::canary {
namespace {

constexpr char kOther[] = "other";  // the kind label of unknown kinds
constexpr int kCodes[] = {200, 400, 404, 500};

// Per kind, created before the server starts (the hot path takes no lock).
struct KindMetrics {
  std::map<int, metrics::Counter*> requests;  // by HTTP code
  metrics::Counter* errors = nullptr;
  metrics::Counter* seconds_sum = nullptr;
  metrics::Counter* seconds_count = nullptr;
};

// The request this worker thread is serving, from the handler call to the
// logger, which cpp-httplib calls on the same thread once the response is
// written.
struct InFlight {
  bool active = false;
  std::chrono::steady_clock::time_point start;
  KindMetrics* kind = nullptr;
  int code = 0;
};
thread_local InFlight in_flight;

}  // namespace

struct ServiceServer::Routes {
  const HandlerLibrary* handler = nullptr;
  sli::SliRecorder* recorder = nullptr;
  metrics::MetricsRegistry* registry = nullptr;
  std::function<void()> refresh_metrics;
  double slowdown = 0;
  std::map<std::string, KindMetrics, std::less<>> kinds;  // + kOther

  KindMetrics& For(const std::string& kind) {
    auto it = kinds.find(kind);
    return it == kinds.end() ? kinds.find(kOther)->second : it->second;
  }
};

absl::StatusOr<std::unique_ptr<ServiceServer>> ServiceServer::Start(
    const HandlerLibrary* handler, sli::SliRecorder* recorder,
    metrics::MetricsRegistry* registry, ServiceServerOptions options) {
  if (options.threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--threads ", options.threads, ": give at least 1 worker thread"));
  }
  std::unique_ptr<ServiceServer> server(new ServiceServer());
  server->routes_ = std::make_unique<Routes>();
  Routes& routes = *server->routes_;
  routes.handler = handler;
  routes.recorder = recorder;
  routes.registry = registry;
  routes.refresh_metrics = std::move(options.refresh_metrics);
  routes.slowdown = options.slowdown;
  std::vector<std::string> kinds = handler->kinds();
  kinds.push_back(kOther);
  for (const std::string& kind : kinds) {
    KindMetrics& m = routes.kinds[kind];
    for (int code : kCodes) {
      m.requests[code] = &registry->AddCounter(
          "phaseloop_service_requests_total",
          "Requests answered, by handler kind and HTTP status",
          {{"kind", kind}, {"code", absl::StrCat(code)}});
    }
    m.errors = &registry->AddCounter(
        "phaseloop_service_request_errors_total",
        "Requests the handler failed (HTTP 500; SLI errors)", {{"kind", kind}});
    m.seconds_sum = &registry->AddCounter(
        "phaseloop_service_request_seconds_sum",
        "Total latency of the requests recorded in the SLI (handler called "
        "to response written), seconds",
        {{"kind", kind}});
    m.seconds_count =
        &registry->AddCounter("phaseloop_service_request_seconds_count",
                              "Requests recorded in the SLI", {{"kind", kind}});
  }

  auto http = std::make_unique<httplib::Server>();
  const int threads = options.threads;
  http->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http->set_payload_max_length(kMaxPayloadBytes);
  http->set_read_timeout(kServiceIoTimeoutSeconds, 0);
  http->set_write_timeout(kServiceIoTimeoutSeconds, 0);
  // Load generators reuse connections: do not close one every 5 requests
  // (cpp-httplib's default).
  http->set_keep_alive_max_count(1 << 20);
  // A response goes out as two writes (headers, body): with Nagle's
  // algorithm the body waits for the client's delayed ACK (~40 ms).
  http->set_tcp_nodelay(true);

  http->Post(R"(/v1/handle/([^/]+))", [&routes](const httplib::Request& request,
                                                httplib::Response& response) {
    const auto start = std::chrono::steady_clock::now();
    const std::string kind = request.matches[1];
    HandlerResult result = routes.handler->Handle(kind, request.body);
    if (routes.slowdown > 0) {
      const auto handled = std::chrono::steady_clock::now();
      const auto until = handled + (handled - start) * routes.slowdown;
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    KindMetrics& metrics =
        routes.For(result.code == HandlerCode::kUnknownKind ? kOther : kind);
    switch (result.code) {
      case HandlerCode::kOk:
        response.status = 200;
        response.set_content(std::move(result.body),
                             "application/octet-stream");
        break;
      case HandlerCode::kUnknownKind:
        response.status = 404;
        response.set_content(
            absl::StrCat("unknown kind '", kind, "'; this handler serves: ",
                         absl::StrJoin(routes.handler->kinds(), ", "), "\n"),
            "text/plain");
        break;
      case HandlerCode::kBadPayload:
        response.status = 400;
        response.set_content(
            absl::StrCat("bad payload for ", kind, " (", request.body.size(),
                         " bytes; at most ", kMaxPayloadBytes, ")\n"),
            "text/plain");
        break;
      case HandlerCode::kFailed:
        response.status = 500;
        response.set_content(absl::StrCat("the handler failed on ", kind, "\n"),
                             "text/plain");
        break;
    }
    in_flight = {true, start, &metrics, response.status};
  });
  http->set_error_handler([](const httplib::Request& request,
                             httplib::Response& response) {
    if (!response.body.empty()) return;
    std::string message = absl::StrCat("HTTP ", response.status, "\n");
    if (response.status == 404) {
      message =
          "no such path; POST /v1/handle/KIND, GET /healthz, GET "
          "/metrics\n";
    } else if (response.status == 413) {
      // cpp-httplib caps form bodies at 8 KiB, whatever the payload limit.
      message = absl::StrCat(
          "request body too large (",
          request.get_header_value("Content-Length"), " bytes, Content-Type '",
          request.get_header_value("Content-Type"),
          "'); send payloads as Content-Type: application/octet-stream (form "
          "bodies are limited to 8 KiB), at most ",
          kMaxPayloadBytes, " bytes\n");
    }
    response.set_content(message, "text/plain");
  });
  http->Get("/healthz", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("ok\n", "text/plain");
  });
  http->Get("/metrics",
            [&routes](const httplib::Request&, httplib::Response& response) {
              if (routes.refresh_metrics) routes.refresh_metrics();
              response.set_content(routes.registry->RenderPrometheusText(),
                                   "text/plain; version=0.0.4");
            });
  http->set_logger([&routes](const httplib::Request&,
                             const httplib::Response&) {
    // Requests refused before the handler (no route, 413) are not the
    // service's latency.
    if (!in_flight.active) return;
    in_flight.active = false;
    KindMetrics& m = *in_flight.kind;
    m.requests[in_flight.code]->Increment();
    if (in_flight.code == 400 || in_flight.code == 404) return;
    const auto latency = std::chrono::steady_clock::now() - in_flight.start;
    const int64_t nanos =
        std::chrono::duration_cast<std::chrono::nanoseconds>(latency).count();
    const bool error = in_flight.code >= 500;
    routes.recorder->RecordNanosAt(sli::SliRecorder::CoarseNowMs(), nanos,
                                   error);
    if (error) m.errors->Increment();
    m.seconds_sum->Increment(static_cast<double>(nanos) * 1e-9);
    m.seconds_count->Increment();
  });

  absl::StatusOr<std::unique_ptr<http::HttpListener>> listener =
      http::HttpListener::Start(std::move(http), options.host, options.port, "",
                                "--listen");
  if (!listener.ok()) return listener.status();
  server->listener_ = *std::move(listener);
  return server;
}

ServiceServer::~ServiceServer() = default;

}  // namespace phaseloop::canary
