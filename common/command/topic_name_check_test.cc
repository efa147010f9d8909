#include "common/command/topic_name_check.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::command {
namespace {

TEST(TopicNameCheckTest, KafkasNamesOnly) {
  for (std::string good : std::vector<std::string>{
           "phaseloop.sli", "a", "A-b_c.9", std::string(249, 'x')}) {
    EXPECT_EQ(KafkaTopicName()(good), "") << good;
  }
  for (std::string bad :
       std::vector<std::string>{"", ".", "..", "bad topic!", "caf\xc3\xa9",
                                std::string(250, 'x'), "a/b"}) {
    EXPECT_NE(KafkaTopicName()(bad).find("expected a Kafka topic name"),
              std::string::npos)
        << bad;
  }
}

}  // namespace
}  // namespace phaseloop::command
