#ifndef PHASELOOP_COMMON_KAFKA_KAFKA_ERROR_H_
#define PHASELOOP_COMMON_KAFKA_KAFKA_ERROR_H_

// Kafka errors as absl::Status values, classified the way librdkafka's
// examples handle them. Every non-OK Status returned by common/kafka carries
// its class (as a payload, and in its message) so callers branch on
// ClassOf(status), never on librdkafka error codes:
//
//   kRetriable  transient (broker down, leader moving, timeout, full queue):
//               the same operation may succeed later; keep the client.
//   kPermanent  this request or message can never succeed as it is (too
//               large, unknown topic, bad configuration, not authorised):
//               do not retry it; dead-letter it or fix the input.
//   kFatal      the client instance is unusable (idempotence guarantees
//               lost, fenced, consumer lost its offset store): close it and
//               create a new one (or exit and let the supervisor restart).
//
// Status codes: retriable is kUnavailable (kDeadlineExceeded for timeouts),
// permanent is kInvalidArgument (kPermissionDenied for authorisation,
// kNotFound for unknown topics/partitions), fatal is kFailedPrecondition.

#include <librdkafka/rdkafkacpp.h>

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace phaseloop::kafka {

enum class ErrorClass { kOk, kRetriable, kPermanent, kFatal };

// "ok", "retriable", "permanent", "fatal".
absl::string_view ErrorClassName(ErrorClass error_class);

// The class of a Status returned by common/kafka. A Status from elsewhere
// (no class payload) is classified by its code: kUnavailable,
// kDeadlineExceeded, kResourceExhausted and kAborted are retriable,
// anything else permanent.
ErrorClass ClassOf(const absl::Status& status);

// How librdkafka error `code` is handled when it is not flagged fatal.
ErrorClass ClassifyErrorCode(RdKafka::ErrorCode code);

// A Status for librdkafka error `code` met while doing `what` (e.g. "produce
// to phaseloop.sli"), classified by ClassifyErrorCode, or fatal when `fatal`.
// `detail` (librdkafka's error string, if richer than the code's) is added.
absl::Status KafkaStatus(RdKafka::ErrorCode code, absl::string_view what,
                         absl::string_view detail = "", bool fatal = false);

// The librdkafka code a KafkaStatus was made from; nullopt for others.
std::optional<RdKafka::ErrorCode> KafkaCodeOf(const absl::Status& status);

// The record is larger than the producer may send (message.max.bytes):
// when Producer::Produce returns it, that record alone is refused, and the
// same bytes can never be produced. (The same code in a delivery report is
// the broker's, and fails a whole batch of records that may each be fine.)
bool TooLargeToProduce(const absl::Status& status);

// A delivery failure in which the broker refused the records for what they
// are (message too large for the topic, batch too large, invalid record):
// the refusal is of a whole batch, so one of its records may be at fault,
// or none alone; producing each record alone tells which.
bool BrokerRefusedTheRecords(const absl::Status& status);

// A Status of class `error_class` with `message` (for errors that are not a
// librdkafka code, e.g. a failed offset lookup).
absl::Status ClassifiedStatus(ErrorClass error_class,
                              absl::string_view message);

}  // namespace phaseloop::kafka

#endif  // PHASELOOP_COMMON_KAFKA_KAFKA_ERROR_H_
