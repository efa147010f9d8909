#include "canary/judge/judge_http_server.h"

#include <httplib.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "canary/judge/judge.h"
#include "canary/judge/judge_json.h"

namespace phaseloop::canary {
namespace {

constexpr char kJson[] = "application/json";

// Judges the request body into `response`; `gate`: non-Pass is 412.
void Serve(const JudgeConfig& config, bool gate,
           const httplib::Request& request, httplib::Response& response) {
  auto metrics = ParseJudgeRequest(request.body);
  if (!metrics.ok()) {
    response.status = 400;
    response.set_content(ErrorToJson(std::string(metrics.status().message())),
                         kJson);
    return;
  }
  const Judgement judgement = Judge(*metrics, config);
  response.status = gate && judgement.outcome != Outcome::kPass ? 412 : 200;
  response.set_content(JudgementToJson(judgement), kJson);
}

}  // namespace

absl::StatusOr<std::unique_ptr<JudgeHttpServer>> JudgeHttpServer::Start(
    JudgeConfig config, const std::string& host, int port) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "judge port ", port, " is outside 0..65535 (0: any free port)"));
  }
  std::unique_ptr<JudgeHttpServer> server(new JudgeHttpServer());
  server->config_ = std::move(config);
  server->server_ = std::make_unique<httplib::Server>();
  httplib::Server& http = *server->server_;
  const JudgeConfig& judge_config = server->config_;
  http.set_payload_max_length(kMaxRequestBytes);
  http.set_read_timeout(kIoTimeoutSeconds, 0);
  http.set_write_timeout(kIoTimeoutSeconds, 0);
  http.set_keep_alive_timeout(kIoTimeoutSeconds);

  http.Post("/v1/judge", [&judge_config](const httplib::Request& request,
                                         httplib::Response& response) {
    Serve(judge_config, /*gate=*/false, request, response);
  });
  http.Post("/v1/gate", [&judge_config](const httplib::Request& request,
                                        httplib::Response& response) {
    Serve(judge_config, /*gate=*/true, request, response);
  });
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("ok\n", "text/plain");
  });
  auto not_allowed = [](const httplib::Request& request,
                        httplib::Response& response) {
    if (request.path == "/v1/judge" || request.path == "/v1/gate") {
      response.status = 405;
      response.set_header("Allow", "POST");
    } else if (request.path == "/healthz") {
      response.status = 405;
      response.set_header("Allow", "GET");
    } else {
      response.status = 404;
    }
  };
  http.Get("/v1/judge", not_allowed);
  http.Get("/v1/gate", not_allowed);
  http.Put("/v1/judge", not_allowed);
  http.Put("/v1/gate", not_allowed);
  http.Post("/healthz", not_allowed);
  http.set_error_handler([](const httplib::Request& request,
                            httplib::Response& response) {
    if (response.body.empty()) {
      // httplib caps a form-encoded body (curl -d's default type) at 8 KiB,
      // whatever the payload limit: name the header that lifts it.
      const bool form =
          absl::StartsWith(request.get_header_value("Content-Type"),
                           "application/x-www-form-urlencoded");
      const std::string message =
          response.status == 413 && form
              ? "a form-encoded body is limited to 8192 bytes; send the JSON "
                "with Content-Type: application/json (curl: -H "
                "'Content-Type: application/json')"
          : response.status == 413
              ? absl::StrCat("request body over ", kMaxRequestBytes,
                             " bytes; send fewer samples (e.g. per-window "
                             "p95s) per request")
          : response.status == 404 ? "no such path; POST /v1/judge or /v1/gate"
                                   : absl::StrCat("HTTP ", response.status);
      response.set_content(ErrorToJson(message), kJson);
    }
  });

  absl::StatusOr<std::unique_ptr<http::HttpListener>> listener =
      http::HttpListener::Start(std::move(server->server_), host, port, "",
                                "--listen");
  if (!listener.ok()) return listener.status();
  server->listener_ = *std::move(listener);
  return server;
}

JudgeHttpServer::~JudgeHttpServer() = default;

}  // namespace phaseloop::canary
