#include "common/files/proto_json.h"

#include <memory>

#include "common/protobuf/utf8_strings.h"
#include "google/protobuf/util/json_util.h"

namespace phaseloop::files {

std::string ProtoToJson(const google::protobuf::Message& message) {
  if (protobuf::HasInvalidUtf8(message)) {
    std::unique_ptr<google::protobuf::Message> valid(message.New());
    valid->CopyFrom(message);
    protobuf::MakeStringsValidUtf8(valid.get());
    return ProtoToJson(*valid);
  }
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.add_whitespace = true;
  std::string text;
  // Printing a message built in this process cannot fail (no Any fields).
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return text;
}

absl::Status ProtoFromJson(const std::string& text,
                           google::protobuf::Message* message) {
  google::protobuf::util::JsonParseOptions options;
  const auto status =
      google::protobuf::util::JsonStringToMessage(text, message, options);
  if (!status.ok()) return absl::InvalidArgumentError(status.ToString());
  return absl::OkStatus();
}

}  // namespace phaseloop::files
