#include "canary/service/check_requests.h"

#include <array>

#include "absl/strings/str_cat.h"

namespace phaseloop::canary {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::array<const char*, 32> kWords = {
    "the",   "loop",     "policy",  "latency", "window",  "canary", "build",
    "pass",  "order",    "service", "request", "sketch",  "reward", "budget",
    "error", "module",   "compile", "deflate", "inflate", "stream", "buffer",
    "of",    "and",      "to",      "a",       "in",      "is",     "for",
    "with",  "baseline", "rollout", "measure"};

}  // namespace

std::string TextPayload(uint64_t seed, size_t size) {
  std::string text;
  text.reserve(size + 16);
  uint64_t state = seed;
  while (text.size() < size) {
    const uint64_t r = SplitMix64(state);
    // Skewed choice: low word indexes are common, as in real text.
    const size_t index = (r & 31) & ((r >> 5) & 31);
    text += kWords[index];
    const uint64_t separator = (r >> 10) % 16;
    text += separator == 0 ? ".\n" : separator == 1 ? ", " : " ";
  }
  text.resize(size);
  return text;
}

std::string RandomPayload(uint64_t seed, size_t size) {
  std::string bytes(size, '\0');
  uint64_t state = seed;
  for (size_t i = 0; i < size; i += 8) {
    const uint64_t r = SplitMix64(state);
    for (size_t j = 0; j < 8 && i + j < size; ++j) {
      bytes[i + j] = static_cast<char>(r >> (8 * j));
    }
  }
  return bytes;
}

std::string CheckRequest::Describe() const {
  return absl::StrCat(kind, " ", shape, " seed ", seed, ", ", payload.size(),
                      " bytes");
}

const std::vector<std::string>& DemoKinds() {
  static const auto* kinds =
      new std::vector<std::string>{"deflate", "roundtrip", "crc32"};
  return *kinds;
}

std::vector<CheckRequest> DefaultCheckRequests() {
  std::vector<CheckRequest> requests;
  for (const std::string& kind : DemoKinds()) {
    for (size_t size : {size_t{0}, size_t{1}, size_t{100}, size_t{4096},
                        size_t{65536}, size_t{1} << 20}) {
      for (uint64_t seed : {1, 2}) {
        requests.push_back({kind, "text", seed, TextPayload(seed, size)});
      }
    }
    for (size_t size : {size_t{4096}, size_t{65536}}) {
      requests.push_back({kind, "random", 3, RandomPayload(3, size)});
      requests.push_back({kind, "zeros", 0, std::string(size, '\0')});
    }
  }
  return requests;
}

}  // namespace phaseloop::canary
