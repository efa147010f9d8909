#ifndef PHASELOOP_CANARY_LOAD_PAYLOAD_H_
#define PHASELOOP_CANARY_LOAD_PAYLOAD_H_

// Request payloads: deterministic text-like bytes (lower-case words of a
// fixed vocabulary, spaces, newlines, now and then a number), so the demo
// service's deflate does real work (it compresses to roughly a third, like
// prose) and a seed always gives the same bytes.

#include <cstdint>
#include <string>

namespace phaseloop::canary::load {

// `size` bytes of text-like data drawn from `seed`.
std::string TextLikePayload(uint64_t seed, size_t size);

}  // namespace phaseloop::canary::load

#endif  // PHASELOOP_CANARY_LOAD_PAYLOAD_H_
