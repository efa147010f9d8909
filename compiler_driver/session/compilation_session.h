#ifndef PHASELOOP_COMPILER_DRIVER_SESSION_COMPILATION_SESSION_H_
#define PHASELOOP_COMPILER_DRIVER_SESSION_COMPILATION_SESSION_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/ir/opt_level.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/passes/pass_runner.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace phaseloop::session {

struct SessionOptions {
  // The -O level the module was produced at; sets the codegen level used for
  // `text_size` and the tuning of level-dependent passes.
  ir::OptLevel opt_level = ir::OptLevel::kOz;
  passes::PipelineFlavor flavor = passes::PipelineFlavor::kClang;
  // Run the IR verifier after every action; a failure rolls the step back.
  bool verify_each_step = true;
};

// One module being optimised by a sequence of actions: CompilerGym's session
// contract (start, apply, observe, fork) in process, over LLVM 16.
//
// Ownership and threading: a session owns its module; forks share the
// LLVMContext and the code generator of their parent, so a session and all its
// forks must be used from one thread. Run arbitrary (possibly crashing) pass
// sequences in a worker process (staging_harness/workers), not in a process
// that must survive them.
class CompilationSession {
 public:
  // Takes the module (verified) and the context it lives in.
  static absl::StatusOr<std::unique_ptr<CompilationSession>> Start(
      std::shared_ptr<llvm::LLVMContext> context,
      std::unique_ptr<llvm::Module> module, const SessionOptions& options,
      const passes::ActionSpace& space = passes::ActionSpace::Llvm16());

  // Loads a source (through clang-16's frontend at options.opt_level), a .bc
  // or a .ll file; IR files use opt-16's pipeline tuning.
  static absl::StatusOr<std::unique_ptr<CompilationSession>> StartFromFile(
      const std::string& path, ir::FrontendOptions frontend,
      SessionOptions options);

  // Applies one action. Unknown index: InvalidArgument. If the verifier
  // rejects the result, the state is rolled back and Internal names the action.
  absl::Status Step(int action);
  // Applies the actions in order; stops at the first failure (the actions
  // before it stay applied).
  absl::Status Step(const std::vector<int>& actions);

  // Observations of the current state; computed once per state.
  int64_t IrCount();
  const std::array<int64_t, observation::kAutophaseDim>& Autophase();
  const std::array<int64_t, observation::kInstCountDim>& InstCount();
  // The object's `.text` bytes (text_size) and allocated bytes (alloc_size:
  // every SHF_ALLOC section, .rodata, .data and .eh_frame too). Both come
  // from one object emission per state, whichever is asked for first.
  absl::StatusOr<int64_t> TextSize();
  absl::StatusOr<int64_t> AllocSize();
  std::string IrText() const;
  // module_hash of the current state (BLAKE3 of its bitcode).
  const std::string& StateHash();
  // module_hash of the module the session started from.
  const std::string& StartHash() const { return start_hash_; }

  const std::vector<int>& history() const { return history_; }
  const passes::ActionSpace& action_space() const { return *space_; }
  const SessionOptions& options() const { return options_; }
  const llvm::Module& module() const { return *module_; }

  // A deep copy of the state, sharing the context: cheaper than replaying.
  std::unique_ptr<CompilationSession> Fork();

 private:
  CompilationSession() = default;
  void Invalidate();
  absl::StatusOr<codegen::ObjectSizes> ObjectSizesOfState();
  // Rebuilds the module from the start bitcode and replays `history_`.
  absl::Status Restore();

  std::shared_ptr<llvm::LLVMContext> context_;
  std::shared_ptr<codegen::ObjectEmitter> emitter_;
  std::unique_ptr<passes::PassRunner> runner_;
  std::unique_ptr<llvm::Module> module_;
  const passes::ActionSpace* space_ = nullptr;
  SessionOptions options_;
  std::shared_ptr<const std::string> start_bitcode_;
  std::string start_hash_;
  std::vector<int> history_;

  // Per-state caches, cleared by every step.
  std::optional<int64_t> ir_count_;
  std::optional<std::array<int64_t, observation::kAutophaseDim>> autophase_;
  std::optional<std::array<int64_t, observation::kInstCountDim>> inst_count_;
  std::optional<codegen::ObjectSizes> object_sizes_;
  std::optional<std::string> state_hash_;
};

}  // namespace phaseloop::session

#endif  // PHASELOOP_COMPILER_DRIVER_SESSION_COMPILATION_SESSION_H_
