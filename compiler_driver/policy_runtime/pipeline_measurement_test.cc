#include "compiler_driver/policy_runtime/pipeline_measurement.h"

#include <memory>
#include <string>

#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/policy_runtime/wrapper_module_fixture.h"
#include "gtest/gtest.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::policy_runtime {
namespace {

// A fixture at -Oz with the wrapper's runner and code generator.
class PipelineMeasurementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WrapperModule loaded;
    absl::Status status =
        testing::LoadWrapperModule("sorting.c", context_, &loaded);
    ASSERT_TRUE(status.ok()) << status;
    module_ = std::move(loaded.module);
    emitter_ = std::move(loaded.emitter);
    runner_ = std::move(loaded.runner);
  }

  absl::StatusOr<PipelineMeasurement> Measure(const std::string& pipeline,
                                              MeasurementMemo* memo) {
    MeasureOptions options;
    options.keep_object = true;
    options.memo = memo;
    return MeasurePipeline(llvm::CloneModule(*module_), pipeline, *runner_,
                           emitter_.get(), options);
  }

  // The state hash of the module after `ir_pipeline`.
  std::string StateAfter(const std::string& ir_pipeline) {
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(*module_);
    EXPECT_TRUE(runner_->Run(*clone, ir_pipeline).ok());
    return ir::ModuleStateHash(*clone);
  }

  llvm::LLVMContext context_;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<codegen::ObjectEmitter> emitter_;
  std::unique_ptr<passes::PassRunner> runner_;
};

// mem2reg after -Oz finds no alloca left: the IR comes out as -Oz's, so the
// memo answers with -Oz's figures and nothing is emitted; the same IR with
// another codegen option, or other IR, is measured.
TEST_F(PipelineMeasurementTest, TheMemoAnswersWhenTheIrComesOutTheSame) {
  const std::string oz = "default<Oz>";
  const std::string same_ir = "default<Oz>,function(mem2reg)";
  ASSERT_EQ(StateAfter(same_ir), StateAfter(oz));
  ASSERT_NE(StateAfter("default<O1>"), StateAfter(oz));

  MeasurementMemo memo;
  auto first = Measure(oz, &memo);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->reused);
  EXPECT_FALSE(first->object.empty());

  auto again = Measure(same_ir, &memo);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->reused);
  EXPECT_TRUE(again->object.empty());
  EXPECT_EQ(again->alloc_size, first->alloc_size);
  EXPECT_EQ(again->text_size, first->text_size);
  EXPECT_EQ(again->ir_count, first->ir_count);
  EXPECT_EQ(memo.reused(), 1);

  // What the memo answered is what measuring without it gives.
  auto fresh = Measure(same_ir, nullptr);
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->reused);
  EXPECT_EQ(fresh->alloc_size, again->alloc_size);
  EXPECT_EQ(fresh->text_size, again->text_size);
  EXPECT_EQ(fresh->object, first->object);

  auto outlined = Measure(oz + ",codegen<machine-outliner>", &memo);
  ASSERT_TRUE(outlined.ok());
  EXPECT_FALSE(outlined->reused);
  auto o1 = Measure("default<O1>", &memo);
  ASSERT_TRUE(o1.ok());
  EXPECT_FALSE(o1->reused);
  EXPECT_EQ(memo.reused(), 1);
}

// A failed measurement is not remembered: the memo holds only figures that
// came from an emitted object.
TEST_F(PipelineMeasurementTest, AMalformedPipelineIsNotRemembered) {
  MeasurementMemo memo;
  EXPECT_FALSE(Measure("default<Oz>,no-such-pass", &memo).ok());
  auto oz = Measure("default<Oz>", &memo);
  ASSERT_TRUE(oz.ok());
  EXPECT_FALSE(oz->reused);
  EXPECT_EQ(memo.reused(), 0);
}

// A candidate that begins with -Oz continues from a copy of -Oz's IR: the
// sizes are what running it whole gives, and no object is kept.
TEST_F(PipelineMeasurementTest, ContinuingFromOzMeasuresWhatAWholeRunDoes) {
  std::string oz_bitcode;
  MeasureOptions keep_and_save;
  keep_and_save.keep_object = true;
  keep_and_save.optimised_bitcode = &oz_bitcode;
  auto oz = MeasurePipeline(llvm::CloneModule(*module_), "default<Oz>",
                            *runner_, emitter_.get(), keep_and_save);
  ASSERT_TRUE(oz.ok()) << oz.status();
  ASSERT_FALSE(oz_bitcode.empty());
  const OzContinuation from_oz(oz_bitcode, module_->getModuleIdentifier());
  for (const std::string pipeline :
       {"default<Oz>,codegen<machine-outliner>",
        "default<Oz>,scc-oz-module-inliner,constmerge,function(sink)",
        "default<Oz>,function(instcombine),function(simplifycfg),codegen<"
        "machine-outliner>",
        "default<Oz>,default<Oz>"}) {
    ASSERT_TRUE(from_oz.Continues(pipeline)) << pipeline;
    auto continued = from_oz.Measure(pipeline, *runner_, emitter_.get(),
                                     /*memo=*/nullptr);
    ASSERT_TRUE(continued.ok()) << continued.status();
    auto whole = Measure(pipeline, nullptr);
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ(continued->alloc_size, whole->alloc_size) << pipeline;
    EXPECT_EQ(continued->text_size, whole->text_size) << pipeline;
    EXPECT_EQ(continued->ir_count, whole->ir_count) << pipeline;
    EXPECT_TRUE(continued->object.empty()) << pipeline;
  }
  for (const char* other : {"default<O2>,default<Oz>", "function(mem2reg)",
                            "tuned<Oz;merge-functions>", "default<Oz"}) {
    EXPECT_FALSE(from_oz.Continues(other)) << other;
    EXPECT_FALSE(
        from_oz.Measure(other, *runner_, emitter_.get(), nullptr).ok());
  }
  EXPECT_FALSE(OzContinuation("", "m").Continues("default<Oz>,dce"));
}

}  // namespace
}  // namespace phaseloop::policy_runtime
