#ifndef PHASELOOP_REWARD_ENGINE_ENGINE_SLI_INPUT_H_
#define PHASELOOP_REWARD_ENGINE_ENGINE_SLI_INPUT_H_

// What the reward engine accepts from phaseloop.sli, and the dead letter of
// what it does not. Decoding never fails the engine: every record is either
// an SliInput or a reason, "<class>: <detail>", with class one of
//   malformed        not a serialized phaseloop.v1.SliWindow
//   invalid          breaks a rule of reward_engine/sli/sli_window.h (the
//                    detail starts with the field)
//   key_mismatch     the Kafka key is not the service of the value (the
//                    partitioning, and so the windowing, relies on it)
//   misaligned       its window length does not divide the engine's window
//   future           the window starts more than kMaxFutureSkewMs after the
//                    record's own (producer) timestamp: a wrong clock or
//                    field, which would make every earlier window late
//   unknown_service  no SLO names the service (add one to --slo-dir)
//   conflict         set by the engine (EventTimeWindows' kConflict)

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kafka/consumer.h"
#include "phaseloop/v1/reward.pb.h"
#include "reward_engine/engine/event_time_windows.h"
#include "reward_engine/slo/slo_config.h"

namespace phaseloop::reward_engine {

// How far a window's start may be ahead of its record's timestamp (clock
// skew between the producer and the services it measures).
inline constexpr int64_t kMaxFutureSkewMs = 5 * 60 * 1000;

// Service -> SLO latency threshold in seconds. With several SLOs for one
// service the strictest (lowest) threshold is the reward's SLO.
using SloThresholds = std::map<std::string, double>;
SloThresholds ThresholdsOf(const std::vector<slo::Slo>& slos);

// The record as an SliInput, or FailedPrecondition whose message is the
// dead-letter reason.
absl::StatusOr<SliInput> DecodeSliRecord(const kafka::ConsumedMessage& message,
                                         int64_t window_ms,
                                         const SloThresholds& slos);

// The engine's name in the dead letters it writes (kafka::MakeDeadLetter).
inline constexpr absl::string_view kDeadLetterConsumer = "reward-engine";

}  // namespace phaseloop::reward_engine

#endif  // PHASELOOP_REWARD_ENGINE_ENGINE_SLI_INPUT_H_
