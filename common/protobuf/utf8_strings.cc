#include "common/protobuf/utf8_strings.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"

namespace phaseloop::protobuf {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Length of the valid UTF-8 sequence starting at text[i], or 0.
size_t ValidSequenceAt(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t code, min;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, code = lead & 0x1f, min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, code = lead & 0x0f, min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, code = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(k) & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
    return 0;
  return length;
}

// Whether `field` holds UTF-8-checked strings.
bool IsTextField(const FieldDescriptor* field) {
  return field->type() == FieldDescriptor::TYPE_STRING;
}

bool IsMessageField(const FieldDescriptor* field) {
  return field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
}

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = ValidSequenceAt(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string ValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = ValidSequenceAt(text, i);
    if (length == 0) {
      out += absl::StrFormat("\\x%02x", static_cast<uint8_t>(text[i]));
      ++i;
    } else {
      out.append(text.data() + i, length);
      i += length;
    }
  }
  return out;
}

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

bool HasInvalidUtf8(const Message& message) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  std::string scratch;
  for (const FieldDescriptor* field : fields) {
    if (IsTextField(field)) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          if (!IsValidUtf8(reflection->GetRepeatedStringReference(
                  message, field, i, &scratch))) {
            return true;
          }
        }
      } else if (!IsValidUtf8(reflection->GetStringReference(message, field,
                                                             &scratch))) {
        return true;
      }
    } else if (IsMessageField(field)) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          if (HasInvalidUtf8(reflection->GetRepeatedMessage(message, field, i)))
            return true;
        }
      } else if (HasInvalidUtf8(reflection->GetMessage(message, field))) {
        return true;
      }
    }
  }
  return false;
}

std::string SerializeAsValidUtf8(const Message& message) {
  if (!HasInvalidUtf8(message)) return message.SerializeAsString();
  std::unique_ptr<Message> valid(message.New());
  valid->CopyFrom(message);
  MakeStringsValidUtf8(valid.get());
  return valid->SerializeAsString();
}

}  // namespace phaseloop::protobuf
