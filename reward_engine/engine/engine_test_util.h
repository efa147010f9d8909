#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_TEST_UTIL_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_TEST_UTIL_H_

// Helpers for the reward engine's tests and benchmark: SLI windows with real
// sketches, an SLO directory, and reading the engine's outputs back.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/kafka/consumer.h"
#include "common/kafka/producer.h"
#include "phaseloop/v1/reward.pb.h"
#include "phaseloop/v1/sli.pb.h"
#include "replay_buffer/replay_store.h"

namespace phaseloop::reward_engine::testing {

// A valid SliWindow of `latencies` (seconds) for [start_ms, start_ms +
// length_ms), deployment "dep-<group>" and policy "pol-<group>".
v1::SliWindow MakeSliWindow(const std::string& service,
                            const std::string& group,
                            const std::string& instance, int64_t start_ms,
                            int64_t length_ms,
                            const std::vector<double>& latencies,
                            int64_t errors = 0);

// Writes `dir`/slo.yaml with one OpenSLO SLO per (service, threshold ms).
void WriteSloDirectory(const std::string& dir,
                       const std::map<std::string, double>& thresholds_ms);

// Produces each window to `topic` keyed by service and waits for them.
void ProduceWindows(kafka::Producer& producer, const std::string& topic,
                    const std::vector<v1::SliWindow>& windows);

// Every record of `topic`, read from the start by a fresh group until no
// record came for `quiet`: the latest value per key.
std::map<std::string, std::string> LatestPerKey(
    const std::string& bootstrap, const std::string& topic,
    std::chrono::milliseconds quiet);
// Every record of `topic` in order of arrival (same reading as above).
std::vector<kafka::ConsumedMessage> ReadAll(const std::string& bootstrap,
                                            const std::string& topic,
                                            std::chrono::milliseconds quiet);

// The buffer's final rewards by reward_id (serialized, for exact equality).
std::map<std::string, std::string> BufferRewards(
    replay_buffer::ReplayStore& store);

// A `phaseloop rewards run` child process (the real binary, path
// "tools/phaseloop" in the runfiles), started with `args` after "rewards run".
// The destructor SIGKILLs it if it still runs.
class EngineProcess {
 public:
  explicit EngineProcess(const std::vector<std::string>& args);
  ~EngineProcess();
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;

  // Sends `signal` (SIGKILL, SIGTERM) and waits for the process to end.
  void Stop(int signal);
  // Exit code (128 after a signal), or -1 if it did not exit within
  // `timeout`.
  int Wait(std::chrono::milliseconds timeout);

 private:
  int pid_ = -1;
};

}  // namespace phaseloop::reward_engine::testing

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_ENGINE_TEST_UTIL_H_
