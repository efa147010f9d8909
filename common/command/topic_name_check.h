#ifndef PHASELOOP_COMMON_COMMAND_TOPIC_NAME_CHECK_H_
#define PHASELOOP_COMMON_COMMAND_TOPIC_NAME_CHECK_H_

// The check of a --topic option: a name Kafka accepts (1-249 of the
// letters, digits, '.', '_' and '-'; not "." or ".."). `sli send --topic
// 'bad topic!'` sent, and the embedded cluster made the topic, exit 0.

#include "CLI/CLI.hpp"

namespace phaseloop::command {

const CLI::Validator& KafkaTopicName();

}  // namespace phaseloop::command

#endif  // PHASELOOP_COMMON_COMMAND_TOPIC_NAME_CHECK_H_
