#ifndef PHASELOOP_COMMON_PROTOBUF_UTF8_STRINGS_H_
#define PHASELOOP_COMMON_PROTOBUF_UTF8_STRINGS_H_

// Protobuf's `string` fields must hold UTF-8: a record serialised with other
// bytes in one (a source file named in Latin-1, a program's raw output, a
// diagnostic cut in the middle of a character) is written with a libprotobuf
// ERROR line on stderr, and every later parse of it fails, so the record is
// lost. Records are made valid before they are written: each byte that is
// not part of valid UTF-8 becomes the four characters \xNN.

#include <memory>
#include <optional>
#include <string>

#include "common/protobuf/utf8_text.h"
#include "google/protobuf/message.h"

namespace phaseloop::protobuf {

// Makes every `string` field (not `bytes`) of `message` and its sub-messages,
// repeated and map fields included, valid UTF-8 with ValidUtf8. Returns how
// many values were changed (0: the message was valid and is untouched).
int MakeStringsValidUtf8(google::protobuf::Message* message);

// Whether some `string` field of `message` or its sub-messages is not valid
// UTF-8 (a check that copies nothing).
bool HasInvalidUtf8(const google::protobuf::Message& message);

// The first such field's path ("iterations[2].candidate_path"; a map
// entry's as "<map>[i].key"/".value"), or nullopt when every one is valid.
std::optional<std::string> FirstInvalidUtf8Field(
    const google::protobuf::Message& message);

// `message` serialised, its invalid strings made valid first (on a copy, so
// a valid message costs one check and no copy).
std::string SerializeAsValidUtf8(const google::protobuf::Message& message);

}  // namespace phaseloop::protobuf

#endif  // PHASELOOP_COMMON_PROTOBUF_UTF8_STRINGS_H_
