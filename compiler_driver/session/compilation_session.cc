#include "compiler_driver/session/compilation_session.h"

#include "absl/strings/str_cat.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/session/pass_target.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::session {

absl::StatusOr<std::unique_ptr<CompilationSession>> CompilationSession::Start(
    std::shared_ptr<llvm::LLVMContext> context,
    std::unique_ptr<llvm::Module> module, const SessionOptions& options,
    const passes::ActionSpace& space) {
  absl::StatusOr<std::unique_ptr<codegen::ObjectEmitter>> emitter =
      codegen::ObjectEmitter::ForModule(*module,
                                        ir::CodegenLevel(options.opt_level));
  if (!emitter.ok()) {
    // The module first, while its context lives: the parameters' own
    // destruction order freed the context first (SIGSEGV in `phaseloop env`
    // on IR for a target this build has no backend for).
    module.reset();
    return emitter.status();
  }
  std::unique_ptr<CompilationSession> session(new CompilationSession());
  session->context_ = std::move(context);
  session->emitter_ = std::move(*emitter);
  session->runner_ = std::make_unique<passes::PassRunner>(
      PassTargetMachine(*session->emitter_, options.flavor),
      passes::TuningFor(options.opt_level, options.flavor));
  session->space_ = &space;
  session->options_ = options;
  session->start_bitcode_ =
      std::make_shared<const std::string>(ir::ModuleBitcode(*module));
  session->start_hash_ = ir::ContentHash(*session->start_bitcode_);
  session->state_hash_ = session->start_hash_;
  session->module_ = std::move(module);
  return session;
}

absl::StatusOr<std::unique_ptr<CompilationSession>>
CompilationSession::StartFromFile(const std::string& path,
                                  ir::FrontendOptions frontend,
                                  SessionOptions options) {
  frontend.opt_level = options.opt_level;
  options.flavor = ir::IsSourcePath(path) ? passes::PipelineFlavor::kClang
                                          : passes::PipelineFlavor::kOpt;
  auto context = std::make_shared<llvm::LLVMContext>();
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      ir::LoadModule(path, frontend, *context);
  if (!module.ok()) return module.status();
  return Start(std::move(context), std::move(*module), options);
}

void CompilationSession::Invalidate() {
  ir_count_.reset();
  autophase_.reset();
  inst_count_.reset();
  object_sizes_.reset();
  state_hash_.reset();
}

absl::Status CompilationSession::Restore() {
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      ir::ParseModule(*start_bitcode_, "session start", *context_);
  if (!module.ok()) return module.status();
  module_ = std::move(*module);
  Invalidate();
  for (int action : history_) {
    absl::Status status = runner_->Run(*module_, space_->at(action).pipeline);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status CompilationSession::Step(int action) {
  if (action < 0 || action >= space_->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("action ", action, " is outside the action space ",
                     space_->version(), " (0..", space_->size() - 1, ")"));
  }
  const passes::Action& a = space_->at(action);
  absl::Status status = runner_->Run(*module_, a.pipeline);
  if (!status.ok()) return status;
  Invalidate();
  if (options_.verify_each_step && llvm::verifyModule(*module_, nullptr)) {
    absl::Status restored = Restore();
    return absl::InternalError(absl::StrCat(
        "action '", a.name,
        "' produced IR that fails the verifier; the step "
        "was rolled back",
        restored.ok() ? "" : " (rollback failed: ",
        restored.ok() ? "" : restored.ToString(), restored.ok() ? "" : ")"));
  }
  history_.push_back(action);
  return absl::OkStatus();
}

absl::Status CompilationSession::Step(const std::vector<int>& actions) {
  for (int action : actions) {
    absl::Status status = Step(action);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

int64_t CompilationSession::IrCount() {
  if (!ir_count_) ir_count_ = observation::IrInstructionCount(*module_);
  return *ir_count_;
}

const std::array<int64_t, observation::kAutophaseDim>&
CompilationSession::Autophase() {
  if (!autophase_) autophase_ = observation::ComputeAutophase(*module_);
  return *autophase_;
}

const std::array<int64_t, observation::kInstCountDim>&
CompilationSession::InstCount() {
  if (!inst_count_) inst_count_ = observation::ComputeInstCount(*module_);
  return *inst_count_;
}

absl::StatusOr<codegen::ObjectSizes> CompilationSession::ObjectSizesOfState() {
  if (!object_sizes_) {
    absl::StatusOr<std::string> object =
        emitter_->EmitObject(llvm::CloneModule(*module_));
    if (!object.ok()) return object.status();
    absl::StatusOr<codegen::ObjectSizes> sizes =
        codegen::MeasureObjectSizes(*object);
    if (!sizes.ok()) return sizes.status();
    object_sizes_ = *sizes;
  }
  return *object_sizes_;
}

absl::StatusOr<int64_t> CompilationSession::TextSize() {
  absl::StatusOr<codegen::ObjectSizes> sizes = ObjectSizesOfState();
  if (!sizes.ok()) return sizes.status();
  return sizes->text_size;
}

absl::StatusOr<int64_t> CompilationSession::AllocSize() {
  absl::StatusOr<codegen::ObjectSizes> sizes = ObjectSizesOfState();
  if (!sizes.ok()) return sizes.status();
  return sizes->alloc_size;
}

std::string CompilationSession::IrText() const {
  return ir::ModuleText(*module_);
}

const std::string& CompilationSession::StateHash() {
  if (!state_hash_) state_hash_ = ir::ModuleHash(*module_);
  return *state_hash_;
}

std::unique_ptr<CompilationSession> CompilationSession::Fork() {
  std::unique_ptr<CompilationSession> copy(new CompilationSession());
  copy->context_ = context_;
  copy->emitter_ = emitter_;
  copy->runner_ = std::make_unique<passes::PassRunner>(
      PassTargetMachine(*emitter_, options_.flavor),
      passes::TuningFor(options_.opt_level, options_.flavor));
  copy->module_ = llvm::CloneModule(*module_);
  copy->space_ = space_;
  copy->options_ = options_;
  copy->start_bitcode_ = start_bitcode_;
  copy->start_hash_ = start_hash_;
  copy->history_ = history_;
  copy->ir_count_ = ir_count_;
  copy->autophase_ = autophase_;
  copy->inst_count_ = inst_count_;
  copy->object_sizes_ = object_sizes_;
  copy->state_hash_ = state_hash_;
  return copy;
}

}  // namespace phaseloop::session
