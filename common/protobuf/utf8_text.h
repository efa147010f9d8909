#ifndef PHASELOOP_COMMON_PROTOBUF_UTF8_TEXT_H_
#define PHASELOOP_COMMON_PROTOBUF_UTF8_TEXT_H_

// UTF-8 as protobuf checks a `string` field, and text made so. No
// dependency beyond the standard library: phaseloop-cc's launcher, which
// writes its decision records by hand, uses it too (utf8_strings.h for
// whole messages).

#include <string>
#include <string_view>

namespace phaseloop::protobuf {

// Whether `text` is valid UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), as protobuf checks a string field.
bool IsValidUtf8(std::string_view text);

// `text` with each byte that is not part of valid UTF-8 written as the four
// characters \xNN (valid text is returned unchanged).
std::string ValidUtf8(std::string_view text);

}  // namespace phaseloop::protobuf

#endif  // PHASELOOP_COMMON_PROTOBUF_UTF8_TEXT_H_
