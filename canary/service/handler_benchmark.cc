// Per-request cost of a handler library, in process (no HTTP): for each
// kind and payload size, the median of repeated calls over text payloads.
// Prints figures (BENCHMARKS.md), asserts nothing.
//
//   handler_benchmark LIB.so [LIB.so ...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "canary/service/check_requests.h"
#include "canary/service/handler_library.h"

int main(int argc, char** argv) {
  using phaseloop::canary::DemoKinds;
  using phaseloop::canary::HandlerLibrary;
  using phaseloop::canary::TextPayload;
  if (argc < 2) {
    std::fprintf(stderr, "usage: handler_benchmark LIB.so [LIB.so ...]\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    auto library = HandlerLibrary::Load(argv[i]);
    if (!library.ok()) {
      std::fprintf(stderr, "%s\n",
                   std::string(library.status().message()).c_str());
      return 2;
    }
    std::printf("%s\n%-10s %10s %12s %12s\n", argv[i], "kind", "bytes",
                "median_us", "MB/s");
    for (const std::string& kind : DemoKinds()) {
      for (size_t size : {1024, 16384, 65536, 262144, 1048576}) {
        const std::string payload = TextPayload(42, size);
        std::vector<double> us;
        const auto start = std::chrono::steady_clock::now();
        while (us.size() < 5 ||
               (us.size() < 2000 && std::chrono::steady_clock::now() - start <
                                        std::chrono::milliseconds(400))) {
          const auto t0 = std::chrono::steady_clock::now();
          (*library)->Handle(kind, payload);
          us.push_back(std::chrono::duration<double, std::micro>(
                           std::chrono::steady_clock::now() - t0)
                           .count());
        }
        std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
        const double median = us[us.size() / 2];
        std::printf("%-10s %10zu %12.1f %12.1f\n", kind.c_str(), size, median,
                    size / median);
      }
    }
  }
  return 0;
}
