#include "common/command/topic_name_check.h"

#include <string>

namespace phaseloop::command {

const CLI::Validator& KafkaTopicName() {
  static const CLI::Validator* check = new CLI::Validator(
      [](std::string& name) -> std::string {
        bool legal = !name.empty() && name.size() <= 249 && name != "." &&
                     name != "..";
        for (char c : name) {
          legal = legal && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                            c == '-');
        }
        if (legal) return "";
        return "expected a Kafka topic name (1-249 of a-z, A-Z, 0-9, '.', "
               "'_', '-'), got '" +
               name + "'";
      },
      "TOPIC");
  return *check;
}

}  // namespace phaseloop::command
