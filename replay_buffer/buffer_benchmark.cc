// Replay buffer throughput: episodes/s written in batches of 100 episodes x
// 30 steps (56 + 70 features per step, one transaction and fsync per batch),
// then samples/s for the learner (uniform and prioritised episodes, uniform
// steps) in draws of 32. Prints figures; asserts nothing. The buffer is a
// temporary file, removed at the end.
//   tools/bazel.sh run -c opt //replay_buffer:buffer_benchmark [-- EPISODES]
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/testing/test_util.h"
#include "common/timing/elapsed.h"
#include "replay_buffer/replay_store.h"
#include "replay_buffer/sampler.h"
#include "replay_buffer/test_records.h"

namespace phaseloop::replay_buffer {
namespace {

using Clock = std::chrono::steady_clock;

int Run(const std::string& path, int total_episodes) {
  auto store = OpenReplayStore(path);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  constexpr int kBatch = 100, kSteps = 30, kModules = 200;
  WriteBatch modules;
  for (int m = 0; m < kModules; ++m) {
    modules.modules.push_back(test_records::MakeModule(
        absl::StrCat("m", m), m % 10 < 8 ? "train" : "validation"));
  }
  if (!(*store)->Write(modules).ok()) return 1;
  double write_seconds = 0;
  for (int start = 0; start < total_episodes; start += kBatch) {
    WriteBatch batch;  // built outside the timed region
    for (int i = start; i < start + kBatch; ++i) {
      batch.episodes.push_back(test_records::MakeEpisode(
          absl::StrCat("e", i), absl::StrCat("m", i % kModules), kSteps, i));
    }
    batch.offsets = {{"bench", "episodes", 0, start + kBatch}};
    const Clock::time_point t = Clock::now();
    absl::Status status = (*store)->Write(batch);
    write_seconds += phaseloop::timing::SecondsSince(t);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  struct stat info;
  const double bytes = stat(path.c_str(), &info) == 0 ? info.st_size : 0;
  std::printf("buffer of %d episodes x %d steps: %.0f MB, %.0f bytes/step\n",
              total_episodes, kSteps, bytes / 1e6,
              bytes / (static_cast<double>(total_episodes) * kSteps));
  std::printf("%-44s %10.0f episodes/s (%.0f steps/s)\n",
              "write, batches of 100 episodes x 30 steps",
              total_episodes / write_seconds,
              total_episodes * kSteps / write_seconds);

  struct Case {
    const char* name;
    SamplingMode mode;
    bool steps;
  };
  for (const Case& c : {Case{"sample episodes, uniform, train split",
                             SamplingMode::kUniform, false},
                        Case{"sample episodes, prioritised |return|",
                             SamplingMode::kAbsReward, false},
                        Case{"sample steps, uniform, train split",
                             SamplingMode::kUniform, true}}) {
    SamplerOptions options;
    options.mode = c.mode;
    options.seed = 1;
    if (c.mode == SamplingMode::kUniform) options.filter.split = "train";
    const Clock::time_point t0 = Clock::now();
    auto sampler = Sampler::Create(**store, options);
    if (!sampler.ok()) return 1;
    const double index_seconds = phaseloop::timing::SecondsSince(t0);
    int64_t drawn = 0;
    const Clock::time_point t = Clock::now();
    while (phaseloop::timing::SecondsSince(t) < 2.0) {
      const bool ok = c.steps ? (*sampler)->SampleSteps(32).ok()
                              : (*sampler)->SampleEpisodes(32).ok();
      if (!ok) return 1;
      drawn += 32;
    }
    std::printf("%-44s %10.0f samples/s (index of %zu: %.0f ms)\n", c.name,
                drawn / phaseloop::timing::SecondsSince(t), (*sampler)->size(),
                index_seconds * 1e3);
  }
  return 0;
}

}  // namespace
}  // namespace phaseloop::replay_buffer

int main(int argc, char** argv) {
  const int episodes = argc > 1 ? std::atoi(argv[1]) : 20000;
  const std::string dir = phaseloop::testing::MakeTempDir();
  const std::string path = dir + "/buffer.db";
  const int rc = phaseloop::replay_buffer::Run(path, episodes);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    unlink((path + suffix).c_str());
  }
  rmdir(dir.c_str());
  return rc;
}
