#ifndef PHASELOOP_CANARY_SERVICE_CHECK_REQUESTS_H_
#define PHASELOOP_CANARY_SERVICE_CHECK_REQUESTS_H_

// The fixed, deterministic requests a handler's outputs are checked on
// (handler_check.h): every kind of the demo handler at several sizes, over
// text-like payloads (compression does real work on them) and a few binary
// ones (incompressible, all zeros). The same seed and size give the same
// bytes on every machine and in every run.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace phaseloop::canary {

// Text-like bytes: words of a fixed vocabulary, chosen by a splitmix64
// sequence from `seed`, with punctuation and line breaks; exactly `size`
// bytes.
std::string TextPayload(uint64_t seed, size_t size);
// Uniform bytes from splitmix64(`seed`): incompressible.
std::string RandomPayload(uint64_t seed, size_t size);

struct CheckRequest {
  std::string kind;
  std::string shape;  // "text", "random" or "zeros"
  uint64_t seed = 0;
  std::string payload;

  // "deflate text seed 1, 65536 bytes"
  std::string Describe() const;
};

// The demo handler's kinds (deflate, roundtrip, crc32).
const std::vector<std::string>& DemoKinds();

// Every kind × text payloads of 0, 1, 100, 4096, 65536 and 1 MiB bytes
// (two seeds each) and random and all-zero payloads of 4096 and 65536
// bytes: 48 requests, about 7 MiB of payloads.
std::vector<CheckRequest> DefaultCheckRequests();

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_SERVICE_CHECK_REQUESTS_H_
