#ifndef PHASELOOP_REWARD_ENGINE_SLI_SLI_COMMAND_H_
#define PHASELOOP_REWARD_ENGINE_SLI_SLI_COMMAND_H_

// `phaseloop sli send --in FILE|- (--kafka BOOTSTRAP [--topic T] | --dry-run)`:
// SLI windows from JSON lines (sli_json.h) to Kafka, so users can bridge
// their own monitoring. Every line is validated before anything is sent: a
// bad line (reported with its number and field) sends nothing, exit 2.
// --dry-run prints the windows as proto3 JSON lines instead of sending.
// Exit codes: 0 sent, 1 internal failure (Kafka), 2 bad input.

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/topics.h"
#include "phaseloop/v1/sli.pb.h"
#include "reward_engine/sli/sli_sink.h"

namespace phaseloop::sli {

void AddSliCommand(CLI::App& app, int& exit_code);

struct SliSendFlags {
  std::string in;  // a file, or "-" for standard input
  std::string kafka;
  std::string topic = std::string(kafka::kSliTopic);
  bool dry_run = false;
};

// Makes the sink that publishes to `topic` at the `bootstrap` servers.
using SliSinkFactory = std::function<absl::StatusOr<std::unique_ptr<SliSink>>(
    const std::string& bootstrap, const std::string& topic)>;

// The Kafka SliSink on common/kafka's Producer: key kafka::SliKey(service),
// value the serialized SliWindow; a window is sent when its delivery is
// acknowledged.
absl::StatusOr<std::unique_ptr<SliSink>> MakeKafkaSliSink(
    const std::string& bootstrap, const std::string& topic);

// Publishes `windows` in order, stopping at the first failure; `published`
// says how many went out. Safe to repeat: consumers de-duplicate windows.
absl::Status SendSliWindows(const std::vector<v1::SliWindow>& windows,
                            SliSink& sink, int* published);

int RunSliSend(const SliSendFlags& flags, std::istream& standard_input,
               std::ostream& out, std::ostream& err,
               const SliSinkFactory& make_sink = MakeKafkaSliSink);

}  // namespace phaseloop::sli

#endif  // PHASELOOP_REWARD_ENGINE_SLI_SLI_COMMAND_H_
