// Benchmarks of issue #2, printed as figures and ratios measured in one run:
//  1. steps/s through the session service (one action per RPC, and batches of
//     10) vs running opt-16 once per step on the whole prefix (read IR, apply,
//     write) — the approach CompilerGym compares against;
//  2. autophase observation time, p50/p99, on every fixture;
//  3. fork vs replaying the history.
// Run: tools/bazel.sh run -c opt //staging_harness/workers:session_benchmark
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "common/testing/test_util.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/session/compilation_session.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "staging_harness/workers/worker_client.h"

namespace phaseloop {
namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

constexpr int kSteps = 40;
// opt-16 replays the very same episodes: both sides pay for the same prefixes.

std::vector<int> RandomActions(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(
      0, passes::ActionSpace::Llvm16().size() - 1);
  std::vector<int> actions;
  for (int i = 0; i < n; ++i) actions.push_back(pick(rng));
  return actions;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

int Main() {
  const std::vector<std::string> fixtures = testing::FixturePaths();
  const passes::ActionSpace& space = passes::ActionSpace::Llvm16();
  service::WorkerOptions options;
  options.worker_binary = "staging_harness/workers/session_worker";
  auto worker = service::WorkerProcess::Start(options);
  if (!worker.ok()) {
    fprintf(stderr, "%s\n", worker.status().ToString().c_str());
    return 1;
  }
  const std::string dir = testing::MakeTempDir();

  double service_s = 0, batch_s = 0, opt_s = 0;
  int service_steps = 0, batch_steps = 0, opt_steps = 0, failures = 0;
  for (size_t f = 0; f < fixtures.size(); ++f) {
    const std::vector<int> actions = RandomActions(kSteps, 1000 + f);
    v1::ModuleSource source;
    source.set_path(fixtures[f]);
    // One action per RPC, observing ir_count each step (as an RL agent does).
    auto session = service::RemoteSession::Start(**worker, source);
    if (!session.ok()) return 1;
    auto t0 = Clock::now();
    for (int a : actions) {
      if ((*session)->Step({a}, {v1::IR_COUNT}).ok())
        ++service_steps;
      else
        ++failures;
    }
    service_s += Seconds(t0, Clock::now());
    // Batches of 10 actions per RPC.
    auto batched = service::RemoteSession::Start(**worker, source);
    if (!batched.ok()) return 1;
    t0 = Clock::now();
    for (int i = 0; i < kSteps; i += 10) {
      std::vector<int> chunk(actions.begin() + i,
                             actions.begin() + std::min(kSteps, i + 10));
      if ((*batched)->Step(chunk, {v1::IR_COUNT}).ok())
        batch_steps += chunk.size();
    }
    batch_s += Seconds(t0, Clock::now());
    // opt-16 once per step: read the unoptimised bitcode, apply the prefix,
    // write.
    const std::string bc = dir + "/in.bc", out = dir + "/out.bc";
    std::string log;
    testing::RunCommand({"clang-16", "-Oz", "-Xclang", "-disable-llvm-passes",
                         "-c", "-emit-llvm", fixtures[f], "-o", bc},
                        &log);
    std::string prefix;
    t0 = Clock::now();
    for (int i = 0; i < kSteps; ++i) {
      if (!prefix.empty()) prefix += ",";
      prefix += space.at(actions[i]).pipeline;
      if (testing::RunCommand({"opt-16", "-passes=" + prefix, bc, "-o", out},
                              &log) == 0) {
        ++opt_steps;
      }
    }
    opt_s += Seconds(t0, Clock::now());
  }
  const double service_rate = service_steps / service_s;
  const double batch_rate = batch_steps / batch_s;
  const double opt_rate = opt_steps / opt_s;
  printf("steps/s over %zu fixtures, random actions (seeded)\n",
         fixtures.size());
  printf(
      "  session service, 1 action/RPC + ir_count : %8.1f steps/s (%d steps, "
      "%d rejected)\n",
      service_rate, service_steps, failures);
  printf("  session service, 10 actions/RPC          : %8.1f steps/s\n",
         batch_rate);
  printf(
      "  opt-16 per step (whole prefix)           : %8.1f steps/s (%d steps)\n",
      opt_rate, opt_steps);
  printf(
      "  ratio service/opt-16: %.1fx   batched/opt-16: %.1fx   (target >= "
      "20x)\n",
      service_rate / opt_rate, batch_rate / opt_rate);

  // Autophase observation time, in process.
  std::vector<double> micros;
  double fork_s = 0, replay_s = 0;
  int forks = 0;
  for (const std::string& fixture : fixtures) {
    auto s = session::CompilationSession::StartFromFile(
        fixture, ir::FrontendOptions{}, session::SessionOptions{});
    if (!s.ok()) return 1;
    for (int i = 0; i < 200; ++i) {
      auto t0 = Clock::now();
      auto features = observation::ComputeAutophase((*s)->module());
      auto t1 = Clock::now();
      if (features[0] < 0) return 1;
      micros.push_back(
          std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    // Fork vs replay after 30 random steps.
    (void)(*s)->Step(RandomActions(30, 7));
    auto t0 = Clock::now();
    for (int i = 0; i < 20; ++i) (void)(*s)->Fork();
    fork_s += Seconds(t0, Clock::now());
    t0 = Clock::now();
    for (int i = 0; i < 20; ++i) {
      auto fresh = session::CompilationSession::StartFromFile(
          fixture, ir::FrontendOptions{}, session::SessionOptions{});
      (void)(*fresh)->Step((*s)->history());
    }
    replay_s += Seconds(t0, Clock::now());
    forks += 20;
  }
  printf(
      "autophase observation over %zu fixtures x 200: p50 %.1f us, p99 %.1f us "
      "(target p50 <= 500 us)\n",
      fixtures.size(), Percentile(micros, 0.5), Percentile(micros, 0.99));
  printf(
      "fork after 30 steps: %.3f ms; replay of the 30 steps (incl. frontend): "
      "%.3f ms; fork is %.0fx cheaper\n",
      1e3 * fork_s / forks, 1e3 * replay_s / forks, replay_s / fork_s);
  return 0;
}

}  // namespace
}  // namespace phaseloop

int main() { return phaseloop::Main(); }
