#include "common/protobuf/utf8_strings.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"

namespace phaseloop::protobuf {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Whether `field` holds UTF-8-checked strings.
bool IsTextField(const FieldDescriptor* field) {
  return field->type() == FieldDescriptor::TYPE_STRING;
}

bool IsMessageField(const FieldDescriptor* field) {
  return field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
}

}  // namespace

int MakeStringsValidUtf8(Message* message) {
  const Reflection* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  int changed = 0;
  for (const FieldDescriptor* field : fields) {
    if (IsTextField(field)) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          const std::string value =
              reflection->GetRepeatedString(*message, field, i);
          if (IsValidUtf8(value)) continue;
          reflection->SetRepeatedString(message, field, i, ValidUtf8(value));
          ++changed;
        }
      } else {
        const std::string value = reflection->GetString(*message, field);
        if (IsValidUtf8(value)) continue;
        reflection->SetString(message, field, ValidUtf8(value));
        ++changed;
      }
    } else if (IsMessageField(field)) {
      // (Map fields are repeated entry messages: keys and values included.)
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          changed += MakeStringsValidUtf8(
              reflection->MutableRepeatedMessage(message, field, i));
        }
      } else {
        changed +=
            MakeStringsValidUtf8(reflection->MutableMessage(message, field));
      }
    }
  }
  return changed;
}

namespace {

// The path of the first field below `message` that is not UTF-8, or
// nullopt. The path is made only for the field found: HasInvalidUtf8 runs
// on every record the replay buffer writes (an episode's every step).
std::optional<std::string> FindInvalidUtf8(const Message& message) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  std::string scratch;
  auto where = [](const FieldDescriptor* field, int index) {
    std::string name = field->name();
    if (index >= 0) name += "[" + std::to_string(index) + "]";
    return name;
  };
  for (const FieldDescriptor* field : fields) {
    if (IsTextField(field)) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          if (!IsValidUtf8(reflection->GetRepeatedStringReference(
                  message, field, i, &scratch))) {
            return where(field, i);
          }
        }
      } else if (!IsValidUtf8(reflection->GetStringReference(message, field,
                                                             &scratch))) {
        return where(field, -1);
      }
    } else if (IsMessageField(field)) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          if (std::optional<std::string> found = FindInvalidUtf8(
                  reflection->GetRepeatedMessage(message, field, i))) {
            return where(field, i) + "." + *found;
          }
        }
      } else if (std::optional<std::string> found =
                     FindInvalidUtf8(reflection->GetMessage(message, field))) {
        return where(field, -1) + "." + *found;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FirstInvalidUtf8Field(const Message& message) {
  return FindInvalidUtf8(message);
}

bool HasInvalidUtf8(const Message& message) {
  return FirstInvalidUtf8Field(message).has_value();
}

std::string SerializeAsValidUtf8(const Message& message) {
  if (!HasInvalidUtf8(message)) return message.SerializeAsString();
  std::unique_ptr<Message> valid(message.New());
  valid->CopyFrom(message);
  MakeStringsValidUtf8(valid.get());
  return valid->SerializeAsString();
}

}  // namespace phaseloop::protobuf
