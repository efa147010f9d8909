#ifndef PHASELOOP_COMMON_NET_LISTEN_ADDRESS_H_
#define PHASELOOP_COMMON_NET_LISTEN_ADDRESS_H_

// What a service's --listen address exposes. Services bind loopback unless
// told otherwise; one that is told otherwise may ask for more (the policy
// store asks for a token). Pure functions, no name resolution.

#include <string>

#include "absl/strings/string_view.h"

namespace phaseloop::net {

// The host part of "HOST:PORT" / "[IPV6]:PORT" (brackets removed); the
// whole text when it has no port.
std::string HostOfListenAddress(absl::string_view listen);

// True for hosts that only this machine reaches: 127.0.0.0/8, ::1,
// "localhost" and a "unix:" socket path. False for anything else, wildcard
// addresses (0.0.0.0, ::, "") and host names included.
bool IsLoopbackHost(absl::string_view host);

// IsLoopbackHost(HostOfListenAddress(listen)), and true for "unix:...".
bool IsLoopbackListenAddress(absl::string_view listen);

}  // namespace phaseloop::net

#endif  // PHASELOOP_COMMON_NET_LISTEN_ADDRESS_H_
