#include "common/net/listen_address.h"

#include <arpa/inet.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace phaseloop::net {

std::string HostOfListenAddress(absl::string_view listen) {
  if (absl::StartsWith(listen, "[")) {
    const size_t close = listen.find(']');
    if (close != absl::string_view::npos) {
      return std::string(listen.substr(1, close - 1));
    }
  }
  const size_t colon = listen.rfind(':');
  // More than one colon without brackets: an IPv6 address with no port.
  if (colon == absl::string_view::npos || listen.find(':') != colon) {
    return std::string(listen);
  }
  return std::string(listen.substr(0, colon));
}

bool IsLoopbackHost(absl::string_view host) {
  if (absl::EqualsIgnoreCase(host, "localhost")) return true;
  in_addr v4;
  const std::string text(host);
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

bool IsLoopbackListenAddress(absl::string_view listen) {
  if (absl::StartsWith(listen, "unix:")) return true;
  return IsLoopbackHost(HostOfListenAddress(listen));
}

}  // namespace phaseloop::net
