#ifndef PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_POLICY_TEST_FIXTURE_H_
#define PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_POLICY_TEST_FIXTURE_H_

// The fixture of artifact_policy_test (single and stepwise modes) and
// artifact_policy_topk_test (topk).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "compiler_driver/codegen/codegen_options.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/action_space.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/policy_runtime/artifact_policy.h"
#include "compiler_driver/policy_runtime/test_artifacts.h"
#include "compiler_driver/policy_runtime/wrapper_module_fixture.h"
#include "gtest/gtest.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::policy_runtime {

inline const std::vector<std::string> kActions = {
    "instcombine", "simplifycfg", "mem2reg", "sroa",      "dce",
    "gvn",         "licm",        "inline",  "globaldce", "early-cse"};

// A fixture module as the wrapper sees it (real build at -Oz), with the
// runner and code generator the wrapper would use.
class ArtifactPolicyTest : public ::testing::Test {
 protected:
  void Load(const std::string& fixture) {
    testing::WrapperModule loaded;
    absl::Status status =
        testing::LoadWrapperModule(fixture, context_, &loaded);
    ASSERT_TRUE(status.ok()) << status;
    module_ = std::move(loaded.module);
    emitter_ = std::move(loaded.emitter);
    runner_ = std::move(loaded.runner);
    autophase_ = observation::ComputeAutophase(*module_);
    inst_count_ = observation::ComputeInstCount(*module_);
  }

  ModuleEnvironment Env() { return {runner_.get(), emitter_.get()}; }

  // The object's sizes after `pipeline` (.text, and every allocated
  // section: what a size policy's topk compares).
  codegen::ObjectSizes SizesAfter(const std::string& pipeline) {
    auto split = codegen::SplitPipeline(pipeline);
    EXPECT_TRUE(split.ok()) << pipeline;
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(*module_);
    EXPECT_TRUE(runner_->Run(*clone, split->ir_pipeline).ok()) << pipeline;
    auto object = emitter_->EmitObject(std::move(clone), split->codegen);
    EXPECT_TRUE(object.ok());
    absl::StatusOr<codegen::ObjectSizes> sizes =
        codegen::MeasureObjectSizes(*object);
    EXPECT_TRUE(sizes.ok());
    return sizes.ok() ? *sizes : codegen::ObjectSizes{-1, -1};
  }
  int64_t TextAfter(const std::string& p) { return SizesAfter(p).text_size; }
  int64_t AllocAfter(const std::string& p) { return SizesAfter(p).alloc_size; }

  static v1::PolicyArtifact Candidates(uint64_t seed) {
    testing::RandomArtifactOptions options;
    options.action_names = kActions;
    options.seed = seed;
    options.candidate_pipelines = {
        "default<Oz>",
        "default<O3>",
        "function(mem2reg)",
        "default<Oz>,function(instcombine),function(simplifycfg)",
        "default<O1>",
        "default<Os>"};
    return testing::RandomArtifact(options);
  }

  // topk over exactly `pipelines` (the first is -Oz), k = all of them, a
  // budget that never binds, and the choice on the loaded module.
  // A topk policy over `pipelines` with a budget nothing exhausts.
  static absl::StatusOr<std::unique_ptr<ArtifactPolicy>> TopKPolicy(
      const std::vector<std::string>& pipelines) {
    testing::RandomArtifactOptions artifact;
    artifact.action_names = kActions;
    artifact.candidate_pipelines = pipelines;
    InferenceOptions options;
    options.mode = InferenceMode::kTopK;
    options.budget = 1'000'000'000;
    return ArtifactPolicy::Create(testing::RandomArtifact(artifact), options);
  }

  absl::StatusOr<PolicyChoice> ChooseTopK(
      const std::vector<std::string>& pipelines) {
    auto policy = TopKPolicy(pipelines);
    if (!policy.ok()) return policy.status();
    return (*policy)->Choose(*module_, autophase_, inst_count_, Env());
  }

  // `ir` parsed into `context`, for the target the loaded fixture has.
  std::unique_ptr<llvm::Module> ParseForTarget(const std::string& ir,
                                               llvm::LLVMContext& context) {
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(ir, error, context);
    EXPECT_NE(module, nullptr) << error.getMessage().str();
    if (module == nullptr) return nullptr;
    module->setTargetTriple(module_->getTargetTriple());
    module->setDataLayout(module_->getDataLayoutStr());
    return module;
  }

  llvm::LLVMContext context_;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<codegen::ObjectEmitter> emitter_;
  std::unique_ptr<passes::PassRunner> runner_;
  std::array<int64_t, observation::kAutophaseDim> autophase_;
  std::array<int64_t, observation::kInstCountDim> inst_count_;
};

}  // namespace phaseloop::policy_runtime

#endif  // PHASELOOP_COMPILER_DRIVER_POLICY_RUNTIME_ARTIFACT_POLICY_TEST_FIXTURE_H_
