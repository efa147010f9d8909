#ifndef PHASELOOP_COMMON_FILES_PROTO_JSON_H_
#define PHASELOOP_COMMON_FILES_PROTO_JSON_H_

// Durable state files as protobuf JSON: field names as in the .proto, every
// field printed (a reader sees zeros, not gaps), indented for people.

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace phaseloop::files {

// A string that is not UTF-8 (which protobuf's printer would drop whole)
// is written with each stray byte as \xNN (protobuf/utf8_strings, on a
// copy: a valid message costs one check and no copy).
std::string ProtoToJson(const google::protobuf::Message& message);

// InvalidArgument with the parser's reason when `text` is not `message`'s
// JSON (unknown fields are errors: a newer writer's file is not silently
// truncated).
absl::Status ProtoFromJson(const std::string& text,
                           google::protobuf::Message* message);

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_PROTO_JSON_H_
