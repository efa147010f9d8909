// Fuzzes the reward engine's input: SliWindow records as they arrive from
// Kafka (DecodeSliRecord, issue 19). The record's key is the one its
// service would be produced under, so mutations reach the checks behind
// the key.
//
// Invariants: no crash, hang or sanitizer report; a refused record's
// dead-letter reason starts with its class (malformed, invalid,
// key_mismatch, misaligned, unknown_service) and the dead letter keeps the
// record's bytes; an accepted one has a sketch that counts its requests.

#include <string>

#include "absl/strings/match.h"
#include "common/fuzzing/fuzz_target.h"
#include "common/kafka/dead_letter.h"
#include "common/kafka/topics.h"
#include "reward_engine/engine/sli_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaseloop;
  kafka::ConsumedMessage message;
  message.topic = "phaseloop.sli";
  message.value = std::string(fuzzing::AsText(data, size));
  v1::SliWindow window;
  const bool parses = window.ParseFromString(message.value);
  message.key = kafka::SliKey(parses ? window.service() : "");
  reward_engine::SloThresholds slos;
  slos["demo-service"] = 0.25;
  const auto input = reward_engine::DecodeSliRecord(message, 10000, slos);
  if (!input.ok()) {
    const std::string reason(input.status().message());
    FUZZ_CHECK(absl::StartsWith(reason, "malformed: ") ||
               absl::StartsWith(reason, "invalid: ") ||
               absl::StartsWith(reason, "key_mismatch: ") ||
               absl::StartsWith(reason, "misaligned: ") ||
               absl::StartsWith(reason, "unknown_service: "));
    const v1::DeadLetter letter = kafka::MakeDeadLetter(
        message, reason, reward_engine::kDeadLetterConsumer);
    FUZZ_CHECK(letter.value() ==
               message.value.substr(0, kafka::kMaxDeadLetterValueBytes));
    return 0;
  }
  FUZZ_CHECK(parses);
  FUZZ_CHECK(input->sketch.count() == input->count);
  FUZZ_CHECK(input->error_count >= 0 && input->error_count <= input->count);
  FUZZ_CHECK(input->sli_window_length_ms > 0 &&
             10000 % input->sli_window_length_ms == 0);
  return 0;
}
