// Training throughput of the learner (issue #5 target: >= 20k transitions/s
// on 2 cores) for the step-wise CQL update — double DQN with a target
// network and the CQL penalty, network 249 -> 256 -> 256 -> 122 (the shipped
// size_stepwise_cql config), batch 256 — against the behaviour-cloning
// update on the same network, measured in the same run, on a synthetic
// buffer written with the real ReplayStore. Prints figures, asserts nothing.
//   bazel run //offline_rl/learner:training_benchmark -- [threads] [steps]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/testing/test_util.h"
#include "common/timing/elapsed.h"
#include "compiler_driver/passes/action_space.h"
#include "offline_rl/learner/dataset.h"
#include "offline_rl/learner/learner.h"
#include "offline_rl/learner/openmp_env.h"
#include "offline_rl/learner/test_buffers.h"

namespace phaseloop::offline_rl {
namespace {

// Transitions/s of `steps` updates after `steps / 10` warm-up updates.
double Measure(const LearnerConfig& config, const Dataset& data, int threads,
               int steps) {
  auto learner = Learner::Create(config, data, threads);
  if (!learner.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(learner.status().message()).c_str());
    std::exit(1);
  }
  const int warmup = steps / 10;
  if (!(*learner)->Train(warmup, "", nullptr).ok()) std::exit(1);
  const auto start = std::chrono::steady_clock::now();
  if (!(*learner)->Train(warmup + steps, "", nullptr).ok()) std::exit(1);
  const double seconds = phaseloop::timing::SecondsSince(start);
  return static_cast<double>(steps) * config.optimizer.batch_size / seconds;
}

int Main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 300;
  const std::string dir = phaseloop::testing::MakeTempDir();
  auto store = replay_buffer::OpenReplayStore(dir + "/buffer.db");
  if (!store.ok() ||
      !testing::WriteStepwiseBuffer(**store, 200, 20, 4, 30, 1).ok()) {
    std::fprintf(stderr, "cannot write the benchmark buffer in %s\n",
                 dir.c_str());
    return 1;
  }
  DatasetOptions options;
  const auto& space = passes::ActionSpace::Llvm16();
  options.action_space_version = space.version();
  for (const auto& a : space.actions()) {
    options.pass_names.push_back(a.name);
    options.pass_pipelines.push_back(a.pipeline);
  }

  LearnerConfig config;
  config.formulation = "stepwise";
  config.network.hidden = {256, 256};
  config.optimizer.batch_size = 256;
  config.optimizer.learning_rate = 3e-4;
  config.gamma = 0.9;
  config.cql_alpha = 1.0;
  config.reward_scale = 100;
  config.target_update_period = 500;
  config.log_every = 0;
  config.checkpoint_every = 0;
  config.algorithm = "cql";
  auto data = BuildDataset(**store, config, options);
  if (!data.ok()) {
    std::fprintf(stderr, "%s\n", std::string(data.status().message()).c_str());
    return 1;
  }
  std::printf(
      "data: %lld transitions, %lld demonstrations, state dim %d, "
      "%d actions; network %d-256-256-%d, batch 256, %d threads, "
      "%d steps\n",
      static_cast<long long>(data->train.transitions.size()),
      static_cast<long long>(data->train.demonstrations.size()),
      data->train.transitions.state_dim, data->train.transitions.num_actions,
      data->train.transitions.state_dim, data->train.transitions.num_actions,
      threads, steps);
  LearnerConfig bc = config;
  bc.algorithm = "bc";
  // Interleaved: BC, CQL, BC, CQL; the median of each pair is reported.
  double bc_rate[2], cql_rate[2];
  for (int round = 0; round < 2; ++round) {
    bc_rate[round] = Measure(bc, *data, threads, steps);
    cql_rate[round] = Measure(config, *data, threads, steps);
  }
  const double bc_mean = (bc_rate[0] + bc_rate[1]) / 2;
  const double cql_mean = (cql_rate[0] + cql_rate[1]) / 2;
  std::printf("bc update (baseline)   %9.0f transitions/s  (%.0f, %.0f)\n",
              bc_mean, bc_rate[0], bc_rate[1]);
  std::printf("cql update (stepwise)  %9.0f transitions/s  (%.0f, %.0f)\n",
              cql_mean, cql_rate[0], cql_rate[1]);
  std::printf(
      "cql / bc               %9.2fx   target: cql >= 20000 "
      "transitions/s on 2 cores\n",
      cql_mean / bc_mean);
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace phaseloop::offline_rl

int main(int argc, char** argv) {
  phaseloop::offline_rl::EnsurePassiveOpenMpWait(argv);
  return phaseloop::offline_rl::Main(argc, argv);
}
