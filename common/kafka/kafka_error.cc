#include "common/kafka/kafka_error.h"

#include <optional>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace phaseloop::kafka {
namespace {

constexpr absl::string_view kClassPayload =
    "type.phaseloop.dev/phaseloop.kafka.ErrorClass";
constexpr absl::string_view kCodePayload =
    "type.phaseloop.dev/phaseloop.kafka.ErrorCode";

bool IsTimeout(RdKafka::ErrorCode code) {
  return code == RdKafka::ERR__TIMED_OUT ||
         code == RdKafka::ERR__MSG_TIMED_OUT ||
         code == RdKafka::ERR__TIMED_OUT_QUEUE ||
         code == RdKafka::ERR_REQUEST_TIMED_OUT;
}

absl::StatusCode CodeFor(ErrorClass error_class, RdKafka::ErrorCode code) {
  switch (error_class) {
    case ErrorClass::kOk:
      return absl::StatusCode::kOk;
    case ErrorClass::kRetriable:
      return IsTimeout(code) ? absl::StatusCode::kDeadlineExceeded
                             : absl::StatusCode::kUnavailable;
    case ErrorClass::kFatal:
      return absl::StatusCode::kFailedPrecondition;
    case ErrorClass::kPermanent:
      break;
  }
  switch (code) {
    case RdKafka::ERR_TOPIC_AUTHORIZATION_FAILED:
    case RdKafka::ERR_GROUP_AUTHORIZATION_FAILED:
    case RdKafka::ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RdKafka::ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
    case RdKafka::ERR__AUTHENTICATION:
    case RdKafka::ERR_SASL_AUTHENTICATION_FAILED:
      return absl::StatusCode::kPermissionDenied;
    case RdKafka::ERR__UNKNOWN_TOPIC:
    case RdKafka::ERR__UNKNOWN_PARTITION:
      return absl::StatusCode::kNotFound;
    default:
      return absl::StatusCode::kInvalidArgument;
  }
}

}  // namespace

absl::string_view ErrorClassName(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::kOk:
      return "ok";
    case ErrorClass::kRetriable:
      return "retriable";
    case ErrorClass::kPermanent:
      return "permanent";
    case ErrorClass::kFatal:
      return "fatal";
  }
  return "unknown";
}

ErrorClass ClassOf(const absl::Status& status) {
  if (status.ok()) return ErrorClass::kOk;
  if (auto payload = status.GetPayload(kClassPayload)) {
    const std::string name(*payload);
    if (name == "retriable") return ErrorClass::kRetriable;
    if (name == "fatal") return ErrorClass::kFatal;
    return ErrorClass::kPermanent;
  }
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
      return ErrorClass::kRetriable;
    default:
      return ErrorClass::kPermanent;
  }
}

ErrorClass ClassifyErrorCode(RdKafka::ErrorCode code) {
  switch (code) {
    case RdKafka::ERR_NO_ERROR:
      return ErrorClass::kOk;
    case RdKafka::ERR__FATAL:
    case RdKafka::ERR__FENCED:
    case RdKafka::ERR__GAPLESS_GUARANTEE:
    case RdKafka::ERR_PRODUCER_FENCED:
    case RdKafka::ERR_FENCED_INSTANCE_ID:
      return ErrorClass::kFatal;
    // Local, transient.
    case RdKafka::ERR__TRANSPORT:
    case RdKafka::ERR__RESOLVE:
    case RdKafka::ERR__MSG_TIMED_OUT:
    case RdKafka::ERR__ALL_BROKERS_DOWN:
    case RdKafka::ERR__TIMED_OUT:
    case RdKafka::ERR__TIMED_OUT_QUEUE:
    case RdKafka::ERR__QUEUE_FULL:
    case RdKafka::ERR__ISR_INSUFF:
    case RdKafka::ERR__NODE_UPDATE:
    case RdKafka::ERR__WAIT_COORD:
    case RdKafka::ERR__IN_PROGRESS:
    case RdKafka::ERR__PREV_IN_PROGRESS:
    case RdKafka::ERR__RETRY:
    case RdKafka::ERR__WAIT_CACHE:
    case RdKafka::ERR__OUTDATED:
    case RdKafka::ERR__ASSIGNMENT_LOST:
    case RdKafka::ERR__MAX_POLL_EXCEEDED:
    case RdKafka::ERR__PURGE_QUEUE:
    case RdKafka::ERR__PURGE_INFLIGHT:
    // Broker, transient (leadership, coordinators, replication, rebalances).
    case RdKafka::ERR_UNKNOWN_TOPIC_OR_PART:
    case RdKafka::ERR_LEADER_NOT_AVAILABLE:
    case RdKafka::ERR_NOT_LEADER_FOR_PARTITION:
    case RdKafka::ERR_REQUEST_TIMED_OUT:
    case RdKafka::ERR_BROKER_NOT_AVAILABLE:
    case RdKafka::ERR_REPLICA_NOT_AVAILABLE:
    case RdKafka::ERR_NETWORK_EXCEPTION:
    case RdKafka::ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RdKafka::ERR_COORDINATOR_NOT_AVAILABLE:
    case RdKafka::ERR_NOT_COORDINATOR:
    case RdKafka::ERR_NOT_ENOUGH_REPLICAS:
    case RdKafka::ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RdKafka::ERR_ILLEGAL_GENERATION:
    case RdKafka::ERR_UNKNOWN_MEMBER_ID:
    case RdKafka::ERR_REBALANCE_IN_PROGRESS:
    case RdKafka::ERR_NOT_CONTROLLER:
    case RdKafka::ERR_KAFKA_STORAGE_ERROR:
    case RdKafka::ERR_FETCH_SESSION_ID_NOT_FOUND:
    case RdKafka::ERR_INVALID_FETCH_SESSION_EPOCH:
    case RdKafka::ERR_FENCED_LEADER_EPOCH:
    case RdKafka::ERR_UNKNOWN_LEADER_EPOCH:
    case RdKafka::ERR_OFFSET_NOT_AVAILABLE:
    case RdKafka::ERR_PREFERRED_LEADER_NOT_AVAILABLE:
    case RdKafka::ERR_UNSTABLE_OFFSET_COMMIT:
    case RdKafka::ERR_THROTTLING_QUOTA_EXCEEDED:
    case RdKafka::ERR_REASSIGNMENT_IN_PROGRESS:
    case RdKafka::ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE:
      return ErrorClass::kRetriable;
    default:
      return ErrorClass::kPermanent;
  }
}

absl::Status ClassifiedStatus(ErrorClass error_class,
                              absl::string_view message) {
  if (error_class == ErrorClass::kOk) return absl::OkStatus();
  absl::StatusCode code = CodeFor(error_class, RdKafka::ERR_UNKNOWN);
  absl::Status status(
      code, absl::StrCat(message, " [", ErrorClassName(error_class), "]"));
  status.SetPayload(kClassPayload, absl::Cord(ErrorClassName(error_class)));
  return status;
}

absl::Status KafkaStatus(RdKafka::ErrorCode code, absl::string_view what,
                         absl::string_view detail, bool fatal) {
  if (code == RdKafka::ERR_NO_ERROR && !fatal) return absl::OkStatus();
  const ErrorClass error_class =
      fatal ? ErrorClass::kFatal : ClassifyErrorCode(code);
  const std::string code_text = RdKafka::err2str(code);
  std::string message =
      absl::StrCat("Kafka ", what, ": ", RdKafka::err2str(code));
  if (!detail.empty() && detail != absl::string_view(code_text)) {
    absl::StrAppend(&message, " (", detail, ")");
  }
  absl::Status status(
      CodeFor(error_class, code),
      absl::StrCat(message, " [", ErrorClassName(error_class), "]"));
  status.SetPayload(kClassPayload, absl::Cord(ErrorClassName(error_class)));
  status.SetPayload(kCodePayload, absl::Cord(absl::StrCat(code)));
  return status;
}

std::optional<RdKafka::ErrorCode> KafkaCodeOf(const absl::Status& status) {
  int code = 0;
  if (auto payload = status.GetPayload(kCodePayload);
      payload && absl::SimpleAtoi(std::string(*payload), &code)) {
    return static_cast<RdKafka::ErrorCode>(code);
  }
  return std::nullopt;
}

bool TooLargeToProduce(const absl::Status& status) {
  return KafkaCodeOf(status) == RdKafka::ERR_MSG_SIZE_TOO_LARGE;
}

bool BrokerRefusedTheRecords(const absl::Status& status) {
  const std::optional<RdKafka::ErrorCode> code = KafkaCodeOf(status);
  return code == RdKafka::ERR_MSG_SIZE_TOO_LARGE ||
         code == RdKafka::ERR_RECORD_LIST_TOO_LARGE ||
         code == RdKafka::ERR_INVALID_RECORD;
}

}  // namespace phaseloop::kafka
