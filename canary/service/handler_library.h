#ifndef PHASELOOP_CANARY_SERVICE_HANDLER_LIBRARY_H_
#define PHASELOOP_CANARY_SERVICE_HANDLER_LIBRARY_H_

// A demo service handler loaded from its shared library
// (demo_workspace/phaseloop_handler.h: the C ABI, its result codes and
// kinds). dlopen with RTLD_NOW | RTLD_LOCAL: the library's symbols never
// serve another library, and two handlers (baseline and candidate) can be
// loaded side by side.
//
// Threading: Handle may be called from any number of threads at once (the
// ABI is reentrant). Ownership: the library stays loaded for the object's
// lifetime.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::canary {

// phaseloop_handler.h's result codes.
enum class HandlerCode {
  kOk = 0,
  kUnknownKind = 1,
  kBadPayload = 2,
  kFailed = 3,
};

struct HandlerResult {
  HandlerCode code = HandlerCode::kFailed;
  std::string body;  // kOk only
};

class HandlerLibrary {
 public:
  // The ABI version this host speaks.
  static constexpr int kAbiVersion = 1;

  // Loads `path`. FailedPrecondition naming the path when it cannot be
  // loaded (dlerror), lacks a phaseloop_* symbol, or speaks another ABI
  // version.
  static absl::StatusOr<std::unique_ptr<HandlerLibrary>> Load(
      const std::string& path);
  ~HandlerLibrary();
  HandlerLibrary(const HandlerLibrary&) = delete;
  HandlerLibrary& operator=(const HandlerLibrary&) = delete;

  HandlerResult Handle(absl::string_view kind, absl::string_view payload) const;

  const std::string& path() const { return path_; }
  // phaseloop_handler_kinds(), split.
  const std::vector<std::string>& kinds() const { return kinds_; }

 private:
  using HandleFn = int (*)(const char*, const unsigned char*, size_t,
                           unsigned char**, size_t*);
  using FreeFn = void (*)(unsigned char*);
  HandlerLibrary() = default;

  std::string path_;
  void* library_ = nullptr;
  HandleFn handle_ = nullptr;
  FreeFn free_ = nullptr;
  std::vector<std::string> kinds_;
};

}  // namespace phaseloop::canary

#endif  // PHASELOOP_CANARY_SERVICE_HANDLER_LIBRARY_H_
