#ifndef PHASELOOP_COMMON_FUZZING_FUZZ_TARGET_H_
#define PHASELOOP_COMMON_FUZZING_FUZZ_TARGET_H_

// What every fuzz target (common/fuzzing/fuzz.bzl) defines, and the helpers
// its invariants use. A target is one function over arbitrary bytes:
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
//
// It returns 0 and aborts (FUZZ_CHECK) when the invariant it states fails,
// so libFuzzer (clang-16, --config=fuzz) and the standalone driver
// (standalone_main.cc, any compiler, ASan or not) both report it as a crash
// with the input that caused it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace phaseloop::fuzzing {

// Prints "invariant failed: <what> (<file>:<line>)" and aborts.
[[noreturn]] void InvariantFailed(const char* what, const char* file, int line);

#define FUZZ_CHECK(condition)                                               \
  do {                                                                      \
    if (!(condition)) {                                                     \
      ::phaseloop::fuzzing::InvariantFailed(#condition, __FILE__, __LINE__); \
    }                                                                       \
  } while (0)

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// `text` split at `separator` (every part, empty ones too).
std::vector<std::string> SplitAll(std::string_view text, char separator);

// The invariant of a parser refusing bad input: `status` is OK, or
// InvalidArgument with a message that names `named` (the file or source it
// read), so the user learns which input to fix. Aborts otherwise.
void CheckClearRefusal(const absl::Status& status, std::string_view named);

// A fresh private directory for one input (removed with its contents by
// the destructor): for parsers that read paths.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `bytes` to path()/name.
  void Write(const std::string& name, std::string_view bytes) const;
  // Names of the entries in path() (sorted), for "nothing written" checks.
  std::vector<std::string> Entries() const;

 private:
  std::string path_;
};

}  // namespace phaseloop::fuzzing

#endif  // PHASELOOP_COMMON_FUZZING_FUZZ_TARGET_H_
