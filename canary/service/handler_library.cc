#include "canary/service/handler_library.h"

#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace phaseloop::canary {

absl::StatusOr<std::unique_ptr<HandlerLibrary>> HandlerLibrary::Load(
    const std::string& path) {
  std::unique_ptr<HandlerLibrary> library(new HandlerLibrary());
  library->path_ = path;
  // A bare name is a file here, as the user meant: dlopen would search the
  // library path for it instead.
  const std::string file =
      path.find('/') == std::string::npos ? "./" + path : path;
  library->library_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library->library_ == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load handler ", path, ": ", error ? error : "dlopen failed",
        "; give the libdemo_handler.so a handler build produced"));
  }
  auto symbol = [&](const char* name) -> void* {
    return dlsym(library->library_, name);
  };
  using VersionFn = int (*)();
  using KindsFn = const char* (*)();
  auto version =
      reinterpret_cast<VersionFn>(symbol("phaseloop_handler_abi_version"));
  auto kinds = reinterpret_cast<KindsFn>(symbol("phaseloop_handler_kinds"));
  library->handle_ = reinterpret_cast<HandleFn>(symbol("phaseloop_handle"));
  library->free_ = reinterpret_cast<FreeFn>(symbol("phaseloop_free"));
  if (version == nullptr || kinds == nullptr || library->handle_ == nullptr ||
      library->free_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "handler ", path,
        " does not export the phaseloop_handler.h ABI (phaseloop_handle, "
        "phaseloop_free, phaseloop_handler_abi_version, "
        "phaseloop_handler_kinds); is it a handler library?"));
  }
  if (const int v = version(); v != kAbiVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("handler ", path, " speaks handler ABI version ", v,
                     "; this phaseloop speaks version ", kAbiVersion,
                     ": rebuild the handler with this phaseloop's header"));
  }
  const char* listed = kinds();
  library->kinds_ =
      absl::StrSplit(listed ? listed : "", ',', absl::SkipEmpty());
  return library;
}

HandlerLibrary::~HandlerLibrary() {
  if (library_ != nullptr) dlclose(library_);
}

HandlerResult HandlerLibrary::Handle(absl::string_view kind,
                                     absl::string_view payload) const {
  HandlerResult result;
  const std::string kind_string(kind);  // NUL-terminated for the ABI
  unsigned char* out = nullptr;
  size_t out_size = 0;
  const int code =
      handle_(kind_string.c_str(),
              reinterpret_cast<const unsigned char*>(payload.data()),
              payload.size(), &out, &out_size);
  switch (code) {
    case 0:
      result.code = HandlerCode::kOk;
      if (out != nullptr) {
        result.body.assign(reinterpret_cast<const char*>(out), out_size);
      }
      break;
    case 1:
      result.code = HandlerCode::kUnknownKind;
      break;
    case 2:
      result.code = HandlerCode::kBadPayload;
      break;
    default:
      result.code = HandlerCode::kFailed;
      break;
  }
  if (out != nullptr) free_(out);
  return result;
}

}  // namespace phaseloop::canary
