#include "compiler_driver/passes/pass_extensions.h"

#include <mutex>

namespace phaseloop::passes {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<PassExtension> extensions;
};

// Constructed on first use: registrations run from other libraries' static
// initialisers, in no particular order.
Registry& TheRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

bool RegisterPassExtension(const PassExtension& extension) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.extensions.push_back(extension);
  return true;
}

bool IsPassExtension(absl::string_view name) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const PassExtension& extension : registry.extensions) {
    if (extension.name == name) return true;
  }
  return false;
}

bool HasPassExtensions() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return !registry.extensions.empty();
}

void AddPassExtensions(llvm::PassBuilder& builder) {
  std::vector<PassExtension> extensions;
  {
    Registry& registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    extensions = registry.extensions;
  }
  for (const PassExtension& extension : extensions) {
    extension.register_with(builder);
  }
}

}  // namespace phaseloop::passes
