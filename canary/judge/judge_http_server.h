#ifndef PHASELOOP_CANARY_JUDGE_JUDGE_HTTP_SERVER_H_
#define PHASELOOP_CANARY_JUDGE_JUDGE_HTTP_SERVER_H_

// The canary judge over HTTP/JSON (judge_json.h has the bodies):
//   POST /v1/judge  200 with the judgement, whatever its outcome — for Argo
//                   Rollouts' web metric provider (jsonPath "{$.result}",
//                   successCondition result.outcome == "Pass");
//   POST /v1/gate   the same body; 200 only when the outcome is Pass, 412
//                   otherwise — for Flagger's webhooks (non-2xx = failed);
//   GET  /healthz   200 "ok".
// A body that is not a valid request is 400 {"error": "..."} naming what
// is wrong; a body over kMaxRequestBytes is 413; other methods 405, other
// paths 404. Reads and writes time out after kIoTimeoutSeconds, so a slow
// client cannot hold a thread.
//
// Ownership and threading: the server copies the config; it runs on its
// own threads (cpp-httplib's pool) and Start returns once it listens. The
// destructor stops it and waits for its threads.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "canary/judge/judge_config.h"
#include "common/http/http_listener.h"

namespace httplib {
class Server;
}

namespace phaseloop::canary {

inline constexpr size_t kMaxRequestBytes = 16 << 20;  // ~1M samples
inline constexpr int kIoTimeoutSeconds = 10;

class JudgeHttpServer {
 public:
  // Listens on host:port (port 0: any free port, see port()). Unavailable
  // naming the address when it cannot bind.
  static absl::StatusOr<std::unique_ptr<JudgeHttpServer>> Start(
      JudgeConfig config, const std::string& host, int port);

  ~JudgeHttpServer();
  JudgeHttpServer(const JudgeHttpServer&) = delete;
  JudgeHttpServer& operator=(const JudgeHttpServer&) = delete;

  int port() const { return listener_->port(); }

 private:
  JudgeHttpServer() = default;

  JudgeConfig config_;
  std::unique_ptr<httplib::Server> server_;       // until the listener has it
  std::unique_ptr<http::HttpListener> listener_;  // last: stops first
};

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_JUDGE_JUDGE_HTTP_SERVER_H_
