#include "canary/load/http_connection.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace phaseloop::canary::load {
namespace {

constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr char kHeaderEnd[] = "\r\n\r\n";

// Waits until `fd` is ready for `events` or `deadline` passes (false).
bool WaitReady(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    // Round up so a deadline less than a millisecond away is still waited.
    const int timeout_ms =
        left.count() < 0 ? 0 : static_cast<int>(left.count()) + 1;
    if (deadline <= Clock::now()) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, timeout_ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // the next call reports it
  }
}

// The response's framing, from its head.
struct Head {
  int status = 0;
  bool keep_alive = true;
  bool chunked = false;
  bool has_length = false;
  int64_t length = 0;
};

bool ParseHead(absl::string_view head, Head& out) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  if (lines.empty()) return false;
  // "HTTP/1.1 200 OK"
  const absl::string_view status_line = lines[0];
  if (!absl::StartsWith(status_line, "HTTP/1.") || status_line.size() < 12 ||
      status_line[8] != ' ') {
    return false;
  }
  const bool http10 = status_line[7] == '0';
  if (!absl::SimpleAtoi(status_line.substr(9, 3), &out.status) ||
      out.status < 100 || out.status > 999) {
    return false;
  }
  out.keep_alive = !http10;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) continue;
    const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    const std::string value = absl::AsciiStrToLower(
        absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    if (name == "content-length") {
      if (!absl::SimpleAtoi(value, &out.length) || out.length < 0) return false;
      out.has_length = true;
    } else if (name == "transfer-encoding") {
      out.chunked = absl::StrContains(value, "chunked");
    } else if (name == "connection") {
      if (absl::StrContains(value, "close")) out.keep_alive = false;
      if (absl::StrContains(value, "keep-alive")) out.keep_alive = true;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<Endpoint> ResolveEndpoint(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0 || found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("host \"", host, "\" does not resolve (", gai_strerror(rc),
                     "); give a name or address this machine knows, e.g. "
                     "127.0.0.1"));
  }
  Endpoint endpoint;
  std::memcpy(&endpoint.address, found->ai_addr, found->ai_addrlen);
  endpoint.address_length = found->ai_addrlen;
  freeaddrinfo(found);
  endpoint.host_header = absl::StrCat(host, ":", port);
  return endpoint;
}

HttpConnection::~HttpConnection() { Close(); }

void HttpConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::string HttpConnection::Connect(Clock::time_point deadline) {
  const int fd = socket(endpoint_.address.ss_family,
                        SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return kErrorConnectFailed;
  ++connects_;
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&endpoint_.address),
              endpoint_.address_length) != 0) {
    if (errno != EINPROGRESS) {
      const int error = errno;
      close(fd);
      return error == ECONNREFUSED ? kErrorConnectRefused : kErrorConnectFailed;
    }
    if (!WaitReady(fd, POLLOUT, deadline)) {
      close(fd);
      return kErrorTimeout;
    }
    int error = 0;
    socklen_t length = sizeof(error);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 ||
        error != 0) {
      close(fd);
      return error == ECONNREFUSED ? kErrorConnectRefused : kErrorConnectFailed;
    }
  }
  fd_ = fd;
  return "";
}

std::string HttpConnection::Send(Clock::time_point deadline) {
  size_t written = 0;
  while (written < request_.size()) {
    const ssize_t n = send(fd_, request_.data() + written,
                           request_.size() - written, MSG_NOSIGNAL);
    if (n > 0) {
      written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitReady(fd_, POLLOUT, deadline)) return kErrorTimeout;
      continue;
    }
    return kErrorClosed;  // EPIPE, ECONNRESET: the peer went away
  }
  return "";
}

ssize_t HttpConnection::ReadMore(Clock::time_point deadline,
                                 std::string& error) {
  char chunk[16 * 1024];
  while (true) {
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      return n;
    }
    if (n == 0) return 0;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!WaitReady(fd_, POLLIN, deadline)) {
        error = kErrorTimeout;
        return -1;
      }
      continue;
    }
    error = kErrorClosed;  // ECONNRESET and the like
    return -1;
  }
}

std::string HttpConnection::ReadUntilSize(size_t size,
                                          Clock::time_point deadline) {
  std::string error;
  while (buffer_.size() < size) {
    const ssize_t n = ReadMore(deadline, error);
    if (n < 0) return error;
    if (n == 0) return kErrorClosed;
  }
  return "";
}

std::string HttpConnection::ReadChunked(size_t at, Clock::time_point deadline,
                                        int64_t& body_bytes) {
  while (true) {
    size_t line_end;
    while ((line_end = buffer_.find("\r\n", at)) == std::string::npos) {
      if (buffer_.size() - at > kMaxHeaderBytes) return kErrorBadResponse;
      if (std::string e = ReadUntilSize(buffer_.size() + 1, deadline);
          !e.empty()) {
        return e;
      }
    }
    absl::string_view size_text(buffer_.data() + at, line_end - at);
    size_text = size_text.substr(0, size_text.find(';'));
    uint64_t size = 0;
    if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(size_text), &size) ||
        size > (uint64_t{1} << 40)) {
      return kErrorBadResponse;
    }
    at = line_end + 2;
    if (size == 0) {
      // Trailers, if any, end with an empty line.
      while (true) {
        if (std::string e = ReadUntilSize(at + 2, deadline); !e.empty()) {
          return e;
        }
        if (buffer_.compare(at, 2, "\r\n") == 0) return "";
        const size_t end = buffer_.find(kHeaderEnd, at);
        if (end != std::string::npos) return "";
        if (std::string e = ReadUntilSize(buffer_.size() + 1, deadline);
            !e.empty()) {
          return e;
        }
      }
    }
    if (std::string e = ReadUntilSize(at + size + 2, deadline); !e.empty()) {
      return e;
    }
    body_bytes += static_cast<int64_t>(size);
    at += size + 2;
    // Drop what was consumed so a long body does not pile up.
    buffer_.erase(0, at);
    at = 0;
  }
}

void HttpConnection::Receive(Clock::time_point deadline, HttpOutcome& outcome,
                             bool& received_any) {
  buffer_.clear();
  std::string error;
  size_t head_end;
  while ((head_end = buffer_.find(kHeaderEnd)) == std::string::npos) {
    if (buffer_.size() > kMaxHeaderBytes) {
      outcome.error = kErrorBadResponse;
      return;
    }
    const ssize_t n = ReadMore(deadline, error);
    if (n > 0) received_any = true;
    if (n < 0) {
      outcome.error = error;
      return;
    }
    if (n == 0) {
      outcome.error = kErrorClosed;
      return;
    }
  }
  Head head;
  if (!ParseHead(absl::string_view(buffer_).substr(0, head_end), head)) {
    outcome.error = kErrorBadResponse;
    return;
  }
  const size_t body_start = head_end + 4;
  const bool no_body =
      head.status < 200 || head.status == 204 || head.status == 304;
  if (head.status < 200) {  // no 1xx is asked for (no Expect header)
    outcome.error = kErrorBadResponse;
    return;
  }
  if (no_body) {
    outcome.body_bytes = 0;
  } else if (head.chunked) {
    outcome.error = ReadChunked(body_start, deadline, outcome.body_bytes);
  } else if (head.has_length) {
    outcome.error = ReadUntilSize(body_start + head.length, deadline);
    outcome.body_bytes = head.length;
  } else {  // the body runs to the close
    while (true) {
      const ssize_t n = ReadMore(deadline, error);
      if (n < 0) {
        outcome.error = error;
        break;
      }
      if (n == 0) break;
    }
    outcome.body_bytes = static_cast<int64_t>(buffer_.size() - body_start);
    head.keep_alive = false;
  }
  if (!outcome.error.empty()) return;
  outcome.status = head.status;
  if (head.status < 200 || head.status > 299) {
    outcome.error = absl::StrCat("http_", head.status);
  }
  if (!head.keep_alive) Close();
}

HttpOutcome HttpConnection::Post(absl::string_view path, absl::string_view body,
                                 Clock::time_point deadline) {
  request_.clear();
  absl::StrAppend(&request_, "POST ", path,
                  " HTTP/1.1\r\nHost: ", endpoint_.host_header,
                  "\r\nContent-Type: application/octet-stream\r\n"
                  "Content-Length: ",
                  body.size(), "\r\n\r\n", body);
  HttpOutcome outcome;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = fd_ >= 0;
    outcome = HttpOutcome();
    if (!reused) {
      outcome.error = Connect(deadline);
      if (!outcome.error.empty()) return outcome;
    }
    bool received_any = false;
    outcome.error = Send(deadline);
    if (outcome.error.empty()) Receive(deadline, outcome, received_any);
    if (outcome.status != 0) return outcome;  // a response, whatever it said
    Close();
    // An idle keep-alive connection the server had closed: resend once.
    if (!(reused && !received_any && outcome.error == kErrorClosed)) break;
  }
  return outcome;
}

}  // namespace phaseloop::canary::load
