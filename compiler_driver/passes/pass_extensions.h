#ifndef PHASELOOP_COMPILER_DRIVER_PASSES_PASS_EXTENSIONS_H_
#define PHASELOOP_COMPILER_DRIVER_PASSES_PASS_EXTENSIONS_H_

// Passes a binary links in beside the action space, for tests only. A
// testonly library (alwayslink, e.g. compiler_driver/testing/miscompile)
// registers its pass from a static initialiser; every PassRunner then
// parses its name, and pipeline_check lets a policy name it. Production
// binaries link no such library, so there a policy naming one is refused
// like any unknown pass, and the wrapper falls back to the baseline.
// Thread-safe.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace llvm {
class PassBuilder;
}  // namespace llvm

namespace phaseloop::passes {

struct PassExtension {
  std::string name;  // the pipeline element's name (parameters allowed)
  // Registers the pass's pipeline parsing callback with a builder.
  void (*register_with)(llvm::PassBuilder& builder) = nullptr;
};

// Adds `extension`; returns true, so that a library can register with
// `static const bool kRegistered = RegisterPassExtension(...);`.
bool RegisterPassExtension(const PassExtension& extension);

// Whether a linked-in extension is called `name`.
bool IsPassExtension(absl::string_view name);

// Whether any extension is linked in (a test binary).
bool HasPassExtensions();

// Registers every linked-in extension with `builder` (none in production).
void AddPassExtensions(llvm::PassBuilder& builder);

}  // namespace phaseloop::passes

#endif  // PHASELOOP_COMPILER_DRIVER_PASSES_PASS_EXTENSIONS_H_
