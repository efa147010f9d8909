#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_RESPONSE_FILE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_RESPONSE_FILE_H_

// Response files ("@file" arguments), expanded the way the clang-16 driver
// expands them on Linux, so that argument processing classifies the command
// clang would really run. The only file access of the wrapper's argument
// handling lives here.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phaseloop::cc_wrapper {

// How deep @files may nest (also what stops a file that includes itself).
inline constexpr int kMaxResponseFileDepth = 32;

// Returns `args` with each argument "@path" (path non-empty) replaced by the
// tokens of the file at `path`, recursively. Nested "@path"s are resolved
// against the working directory, not the including file's directory:
// clang-16's driver does not set RelativeNames (checked with Debian clang
// 16.0.6: an "@inner.rsp" inside sub/outer.rsp reads ./inner.rsp). A file
// that cannot be read, is UTF-16, or nests too deep gives nullopt and a
// message naming the file in *error; clang would leave a missing one as an
// input argument and fail on it, so the caller runs plain clang with the
// original arguments (kBadResponseFile).
std::optional<std::vector<std::string>> ExpandResponseFiles(
    const std::vector<std::string>& args, std::string* error);

// llvm::cl::TokenizeGNUCommandLine: whitespace (space, tab, CR, LF)
// separates; single or double quotes group (an unterminated quote runs to the
// end); a backslash escapes the next character, inside quotes too (a final
// backslash is literal). Like LLVM, a token that is empty ('' or "") is
// dropped.
std::vector<std::string> TokenizeGnuCommandLine(std::string_view text);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_RESPONSE_FILE_H_
