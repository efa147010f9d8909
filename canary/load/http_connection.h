#ifndef PHASELOOP_CANARY_LOAD_HTTP_CONNECTION_H_
#define PHASELOOP_CANARY_LOAD_HTTP_CONNECTION_H_

// The load generator's HTTP/1.1 client over plain sockets: one keep-alive
// connection to one endpoint, one request at a time (no pipelining), every
// step bounded by the request's deadline. It speaks what the demo service
// answers (canary_context: POST /v1/handle/<kind>): Content-Length or
// chunked bodies, or a body up to the close; `Connection: close` and
// HTTP/1.0 close after the response. A request on a reused connection that
// the server had closed while idle (nothing of the response read) is sent
// again once on a new connection; the handlers are pure, so a resend is
// safe.
//
// Thread-safety: none; one connection per worker thread.

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::canary::load {

using Clock = std::chrono::steady_clock;

// A resolved address; the Host header is "host:port".
struct Endpoint {
  sockaddr_storage address{};
  socklen_t address_length = 0;
  std::string host_header;
};

// Resolves host (a name or a numeric address) and port once, before a run.
// InvalidArgument naming host when it does not resolve.
absl::StatusOr<Endpoint> ResolveEndpoint(const std::string& host, int port);

// Why a request got no 2xx answer (the error reasons results count).
inline constexpr char kErrorConnectRefused[] = "connect_refused";
inline constexpr char kErrorConnectFailed[] = "connect_failed";
inline constexpr char kErrorTimeout[] = "timeout";
inline constexpr char kErrorClosed[] = "connection_closed";
inline constexpr char kErrorBadResponse[] = "bad_response";
// Non-2xx answers are "http_<status>", e.g. "http_500".

struct HttpOutcome {
  int status = 0;     // the response's status, 0 when none arrived
  std::string error;  // "" for 2xx; else one of the reasons above
  int64_t body_bytes = 0;
};

class HttpConnection {
 public:
  explicit HttpConnection(const Endpoint& endpoint) : endpoint_(endpoint) {}
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // POST `path` with `body` (application/octet-stream) and reads the whole
  // response, connecting first when not connected. Past `deadline` the
  // request is a timeout and the connection is closed (its state unknown).
  HttpOutcome Post(absl::string_view path, absl::string_view body,
                   Clock::time_point deadline);

  bool connected() const { return fd_ >= 0; }
  // New connections opened so far (keep-alive reuse shows as few).
  int64_t connects() const { return connects_; }

 private:
  // "" or an error reason.
  std::string Connect(Clock::time_point deadline);
  // Writes request_ whole; "" or a reason.
  std::string Send(Clock::time_point deadline);
  // Reads one response into `outcome`; `received_any`: a byte arrived.
  void Receive(Clock::time_point deadline, HttpOutcome& outcome,
               bool& received_any);
  // Appends what the socket has to buffer_: > 0 bytes read, 0 at the end of
  // the stream, -1 on error or timeout (`error` says which).
  ssize_t ReadMore(Clock::time_point deadline, std::string& error);
  // Reads until buffer_ holds `size` bytes; "" or a reason.
  std::string ReadUntilSize(size_t size, Clock::time_point deadline);
  // Decodes a chunked body starting at buffer_[at]; "" or a reason.
  std::string ReadChunked(size_t at, Clock::time_point deadline,
                          int64_t& body_bytes);
  void Close();

  Endpoint endpoint_;
  int fd_ = -1;
  int64_t connects_ = 0;
  std::string request_;  // reused between requests
  std::string buffer_;   // bytes of the current response
};

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_HTTP_CONNECTION_H_
