#include "common/kafka/kafka_error.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace phaseloop::kafka {
namespace {

TEST(KafkaErrorTest, ClassifiesLibrdkafkaCodes) {
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR_NO_ERROR), ErrorClass::kOk);
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR__QUEUE_FULL),
            ErrorClass::kRetriable);
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR__MSG_TIMED_OUT),
            ErrorClass::kRetriable);
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR_NOT_LEADER_FOR_PARTITION),
            ErrorClass::kRetriable);
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR_MSG_SIZE_TOO_LARGE),
            ErrorClass::kPermanent);
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR_TOPIC_AUTHORIZATION_FAILED),
            ErrorClass::kPermanent);
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR__FATAL), ErrorClass::kFatal);
  EXPECT_EQ(ClassifyErrorCode(RdKafka::ERR__FENCED), ErrorClass::kFatal);
}

TEST(KafkaErrorTest, StatusCarriesClassCodeAndContext) {
  absl::Status retriable =
      KafkaStatus(RdKafka::ERR__TRANSPORT, "produce to phaseloop.sli");
  EXPECT_TRUE(absl::IsUnavailable(retriable));
  EXPECT_EQ(ClassOf(retriable), ErrorClass::kRetriable);
  EXPECT_TRUE(
      absl::StrContains(retriable.message(), "produce to phaseloop.sli"));
  EXPECT_TRUE(absl::StrContains(retriable.message(), "[retriable]"));

  absl::Status timeout =
      KafkaStatus(RdKafka::ERR__TIMED_OUT, "flush", "3 left");
  EXPECT_TRUE(absl::IsDeadlineExceeded(timeout));
  EXPECT_TRUE(absl::StrContains(timeout.message(), "3 left"));

  absl::Status permanent =
      KafkaStatus(RdKafka::ERR_MSG_SIZE_TOO_LARGE, "produce");
  EXPECT_TRUE(absl::IsInvalidArgument(permanent));
  EXPECT_EQ(ClassOf(permanent), ErrorClass::kPermanent);
  // The code travels with it: a record too large to produce (a spool sets
  // it aside); a bad configuration, a batch the broker refused or an
  // unknown topic is not.
  EXPECT_EQ(KafkaCodeOf(permanent), RdKafka::ERR_MSG_SIZE_TOO_LARGE);
  EXPECT_TRUE(TooLargeToProduce(permanent));
  EXPECT_FALSE(TooLargeToProduce(KafkaStatus(RdKafka::ERR__INVALID_ARG, "x")));
  EXPECT_FALSE(
      TooLargeToProduce(KafkaStatus(RdKafka::ERR_RECORD_LIST_TOO_LARGE, "x")));
  EXPECT_FALSE(
      TooLargeToProduce(KafkaStatus(RdKafka::ERR__UNKNOWN_TOPIC, "x")));
  EXPECT_FALSE(TooLargeToProduce(retriable));
  EXPECT_FALSE(KafkaCodeOf(absl::InvalidArgumentError("x")).has_value());

  // Any code can be escalated to fatal (librdkafka's fatal flag).
  absl::Status fatal = KafkaStatus(RdKafka::ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
                                   "producer", "", /*fatal=*/true);
  EXPECT_TRUE(absl::IsFailedPrecondition(fatal));
  EXPECT_EQ(ClassOf(fatal), ErrorClass::kFatal);

  EXPECT_TRUE(KafkaStatus(RdKafka::ERR_NO_ERROR, "anything").ok());
}

TEST(KafkaErrorTest, ClassOfForeignStatusFollowsItsCode) {
  EXPECT_EQ(ClassOf(absl::OkStatus()), ErrorClass::kOk);
  EXPECT_EQ(ClassOf(absl::UnavailableError("x")), ErrorClass::kRetriable);
  EXPECT_EQ(ClassOf(absl::DeadlineExceededError("x")), ErrorClass::kRetriable);
  EXPECT_EQ(ClassOf(absl::InternalError("x")), ErrorClass::kPermanent);
  // A classified status keeps its class whatever its code says.
  EXPECT_EQ(ClassOf(ClassifiedStatus(ErrorClass::kFatal, "lookup failed")),
            ErrorClass::kFatal);
  EXPECT_EQ(ErrorClassName(ErrorClass::kRetriable), "retriable");
}

}  // namespace
}  // namespace phaseloop::kafka
