// The load generator's own limits on this machine (BENCHMARKS.md), against
// the trivial echo handler of the test server on loopback (which shares
// the cores):
//  1. overhead: at 200 requests/s, the latency the generator measures minus
//     the service time a bare keep-alive client paced the same way measures
//     on the same server (scheduling, queue hand-off, bookkeeping), and its
//     start delays;
//  2. the highest rate it sustains: rates doubled until the achieved rate
//     falls 2 % short of the intended one or requests fail; each rate's
//     start delays (lateness behind the schedule) printed beside.
// Usage: load_benchmark [--seconds S] [--in-flight N] [--payload BYTES]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "canary/load/http_connection.h"
#include "canary/load/load_results.h"
#include "canary/load/load_spec.h"
#include "canary/load/load_test_server.h"
#include "canary/load/open_loop_load.h"
#include "canary/load/targets.h"
#include "common/timing/elapsed.h"

namespace phaseloop::canary::load {
namespace {

LoadSpec EchoSpec(double rate, double seconds, int in_flight, int payload) {
  LoadSpec spec;
  spec.rate = rate;
  spec.duration_s = seconds;
  spec.max_in_flight = in_flight;
  MixEntry entry;
  entry.kind = "echo";
  entry.min_payload_bytes = entry.max_payload_bytes = payload;
  spec.mix = {entry};
  return spec;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int Main(int argc, char** argv) {
  double seconds = 3;
  int in_flight = 16;
  int payload = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--in-flight"))
      in_flight = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--payload")) payload = std::atoi(argv[i + 1]);
  }
  auto server = LoadTestServer::Start(/*keep_alive_max=*/1 << 30);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  auto targets = TargetSet::Create({{"echo", "127.0.0.1", (*server)->port()}});
  auto endpoint = ResolveEndpoint("127.0.0.1", (*server)->port());
  if (!targets.ok() || !endpoint.ok()) return 1;
  const std::string body(payload, 'x');

  // 1. Overhead at 200 requests/s.
  std::vector<double> bare;
  {
    // Paced like the generator (every 5 ms), so both find the threads
    // and cores equally idle between requests.
    HttpConnection connection(*endpoint);
    const auto begin = Clock::now();
    for (int i = 0; i < 400; ++i) {
      std::this_thread::sleep_until(begin + i * std::chrono::milliseconds(5));
      const auto start = Clock::now();
      connection.Post("/v1/handle/echo", body, start + std::chrono::seconds(5));
      bare.push_back(phaseloop::timing::SecondsSince(start));
    }
  }
  auto low = OpenLoopLoad::Start(EchoSpec(200, seconds, 1, payload), *targets);
  if (!low.ok()) return 1;
  (*low)->Wait();
  const LoadResults r = (*low)->Snapshot();
  const LatencySummary measured = Summarize(r.overall.latency);
  const LatencySummary delay = Summarize(r.overall.start_delay);
  const double bare_p50 = Median(bare);
  std::printf(
      "overhead at 200/s, 1 in flight, %d-byte echo: paced bare client p50 "
      "%.1f us; "
      "generator p50 %.1f us p99 %.1f us (added p50 %.1f us); start delay "
      "p50 %.1f us p99 %.1f us max %.1f us; late (>1 ms) %lld of %lld\n",
      payload, bare_p50 * 1e6, measured.p50 * 1e6, measured.p99 * 1e6,
      (measured.p50 - bare_p50) * 1e6, delay.p50 * 1e6, delay.p99 * 1e6,
      delay.max * 1e6, static_cast<long long>(r.overall.late_starts),
      static_cast<long long>(r.overall.sent));

  // 2. The highest sustained rate.
  std::printf("%10s %10s %9s %9s %9s %12s %8s\n", "rate", "achieved", "p50_ms",
              "p99_ms", "late_%", "delay_p99_ms", "errors");
  double sustained = 0;
  for (double rate = 1000; rate <= 256000; rate *= 2) {
    auto load = OpenLoopLoad::Start(EchoSpec(rate, seconds, in_flight, payload),
                                    *targets);
    if (!load.ok()) return 1;
    (*load)->Wait();
    const LoadResults s = (*load)->Snapshot();
    const double achieved =
        static_cast<double>(s.overall.ok) / std::max(seconds, s.elapsed_s);
    const LatencySummary l = Summarize(s.overall.latency);
    const LatencySummary d = Summarize(s.overall.start_delay);
    const double late =
        s.overall.sent > 0 ? 100.0 * s.overall.late_starts / s.overall.sent : 0;
    std::printf("%10.0f %10.0f %9.3f %9.3f %9.1f %12.3f %8lld\n", rate,
                achieved, l.p50 * 1e3, l.p99 * 1e3, late, d.p99 * 1e3,
                static_cast<long long>(s.overall.error_count()));
    std::fflush(stdout);
    if (achieved < 0.98 * rate || s.overall.error_count() > 0) {
      break;
    }
    sustained = rate;
  }
  std::printf("sustained: %.0f requests/s (%d in flight, %.0f s per rate)\n",
              sustained, in_flight, seconds);
  return 0;
}

}  // namespace
}  // namespace phaseloop::canary::load

int main(int argc, char** argv) {
  return phaseloop::canary::load::Main(argc, argv);
}
