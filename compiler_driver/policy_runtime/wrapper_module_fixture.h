#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_WRAPPER_MODULE_FIXTURE_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_WRAPPER_MODULE_FIXTURE_H_

// Tests only: a fixture source as phaseloop-cc sees it at -Oz (the real
// build's frontend output), with the pass runner and code generator the
// wrapper would use on it (clang's tuning, -Oz code generation).

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/passes/pass_runner.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace phaseloop::policy_runtime::testing {

struct WrapperModule {
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<codegen::ObjectEmitter> emitter;
  std::unique_ptr<passes::PassRunner> runner;
};

// compiler_driver/fixtures/<fixture> loaded into `context` (which must
// outlive the module) into `out`.
absl::Status LoadWrapperModule(const std::string& fixture,
                               llvm::LLVMContext& context, WrapperModule* out);

}  // namespace phaseloop::policy_runtime::testing

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_WRAPPER_MODULE_FIXTURE_H_
