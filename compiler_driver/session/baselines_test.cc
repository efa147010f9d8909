// Fidelity of the baselines: in-process pipelines and codegen must reproduce
// what clang-16 and opt-16 give on the same inputs.
#include "compiler_driver/session/baselines.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "common/testing/test_util.h"
#include "compiler_driver/codegen/object_emitter.h"
#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/observation/features.h"
#include "compiler_driver/passes/pass_runner.h"
#include "compiler_driver/session/pass_target.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::session {
namespace {

using ir::OptLevel;

int64_t IrCountOfFile(const std::string& path) {
  llvm::LLVMContext context;
  auto module = ir::LoadModule(path, ir::FrontendOptions{}, context);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? observation::IrInstructionCount(**module) : -1;
}

int64_t TextOfObject(const std::string& path) {
  auto text = codegen::TextSectionBytes(testing::ReadFileOrEmpty(path));
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : -1;
}

class SourceFidelity : public ::testing::TestWithParam<OptLevel> {};

TEST_P(SourceFidelity, MatchesClangOnEveryFixture) {
  const OptLevel level = GetParam();
  const std::string flag = std::string("-") + ir::OptLevelName(level);
  const std::string dir = testing::MakeTempDir();
  for (const std::string& source : testing::FixturePaths()) {
    SCOPED_TRACE(source + " " + flag);
    auto baselines = SourceBaselines(source, ir::FrontendOptions{}, {level});
    ASSERT_TRUE(baselines.ok()) << baselines.status();
    std::string log;
    const std::string ll = dir + "/clang.ll", obj = dir + "/clang.o";
    ASSERT_EQ(
        testing::RunCommand(
            {"clang-16", flag, "-S", "-emit-llvm", source, "-o", ll}, &log),
        0)
        << log;
    ASSERT_EQ(
        testing::RunCommand({"clang-16", flag, "-c", source, "-o", obj}, &log),
        0)
        << log;
    EXPECT_EQ((*baselines)[0].ir_count, IrCountOfFile(ll));
    EXPECT_EQ((*baselines)[0].text_size, TextOfObject(obj));
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, SourceFidelity,
                         ::testing::Values(OptLevel::kOz, OptLevel::kO2,
                                           OptLevel::kO3),
                         [](const auto& info) {
                           return std::string(ir::OptLevelName(info.param));
                         });

// A fixture's -Oz object (clang's tuning) without codegen options, with
// `options`, and without them again: each from a fresh clone of the
// unoptimised module (emitting a clone of an optimised module can move a
// few bytes of .text), so the third shows whether the options outlived
// their emission.
struct OzObjects {
  std::string plain, with_options, plain_again;
};
absl::StatusOr<OzObjects> EmitAtOz(const std::string& source,
                                   const codegen::CodegenOptions& options) {
  llvm::LLVMContext context;
  auto module = ir::LoadModule(source, ir::FrontendOptions{}, context);
  if (!module.ok()) return module.status();
  auto emitter = codegen::ObjectEmitter::ForModule(
      **module, ir::CodegenLevel(OptLevel::kOz));
  if (!emitter.ok()) return emitter.status();
  passes::PassRunner runner(
      &(*emitter)->target_machine(),
      passes::TuningFor(OptLevel::kOz, passes::PipelineFlavor::kClang));
  auto emit =
      [&](const codegen::CodegenOptions& with) -> absl::StatusOr<std::string> {
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(**module);
    absl::Status ran = runner.Run(*clone, "default<Oz>");
    if (!ran.ok()) return ran;
    return (*emitter)->EmitObject(std::move(clone), with);
  };
  OzObjects out;
  for (auto [with, object] :
       {std::pair<codegen::CodegenOptions, std::string*>{{}, &out.plain},
        {options, &out.with_options},
        {{}, &out.plain_again}}) {
    absl::StatusOr<std::string> emitted = emit(with);
    if (!emitted.ok()) return emitted.status();
    *object = *std::move(emitted);
  }
  return out;
}

// The machine outliner as a policy's codegen option: the object equals
// clang-16 -Oz -mllvm -enable-machine-outliner's on every fixture, and the
// option does not outlive its emission (the next object is plain clang's).
TEST(CodegenOptionFidelity, MachineOutlinerMatchesClangAndDoesNotLeak) {
  const std::string dir = testing::MakeTempDir();
  codegen::CodegenOptions outliner;
  outliner.machine_outliner = true;
  int outlined_anywhere = 0;
  for (const std::string& source : testing::FixturePaths()) {
    SCOPED_TRACE(source);
    auto objects = EmitAtOz(source, outliner);
    ASSERT_TRUE(objects.ok()) << objects.status();
    const std::string& plain = objects->plain;
    const std::string& outlined = objects->with_options;
    EXPECT_EQ(plain, objects->plain_again);

    std::string log;
    const std::string obj = dir + "/clang.o", mo = dir + "/clang-mo.o";
    ASSERT_EQ(
        testing::RunCommand({"clang-16", "-Oz", "-c", source, "-o", obj}, &log),
        0)
        << log;
    ASSERT_EQ(testing::RunCommand(
                  {"clang-16", "-Oz", "-mllvm", "-enable-machine-outliner",
                   "-c", source, "-o", mo},
                  &log),
              0)
        << log;
    EXPECT_EQ(*codegen::TextSectionBytes(plain), TextOfObject(obj));
    EXPECT_EQ(*codegen::TextSectionBytes(outlined), TextOfObject(mo));
    if (outlined.find("OUTLINED_FUNCTION") != std::string::npos) {
      ++outlined_anywhere;
    }
  }
  EXPECT_GT(outlined_anywhere, 0);  // interpreter.c and text_stats.cc do
}

// no-jump-tables as a policy's codegen option: code generation builds no
// jump table, as clang-16 -Oz does when its minimum jump table size cannot
// be reached (-mllvm -min-jump-table-entries=1000000), equal on every
// fixture in .text and in all allocated sections; it changes the object
// where a switch became a jump table (big_switch.c), and it does not outlive
// its emission. (clang's -fno-jump-tables is another thing: its attribute
// also stops the optimiser turning switches into lookup tables.)
TEST(CodegenOptionFidelity, NoJumpTablesMatchesClangAndDoesNotLeak) {
  const std::string dir = testing::MakeTempDir();
  codegen::CodegenOptions no_tables;
  no_tables.no_jump_tables = true;
  int changed = 0;
  for (const std::string& source : testing::FixturePaths()) {
    SCOPED_TRACE(source);
    auto objects = EmitAtOz(source, no_tables);
    ASSERT_TRUE(objects.ok()) << objects.status();
    const std::string& plain = objects->plain;
    const std::string& without_tables = objects->with_options;
    EXPECT_EQ(plain, objects->plain_again);

    std::string log;
    const std::string obj = dir + "/clang-njt.o";
    ASSERT_EQ(testing::RunCommand(
                  {"clang-16", "-Oz", "-mllvm",
                   "-min-jump-table-entries=1000000", "-c", source, "-o", obj},
                  &log),
              0)
        << log;
    EXPECT_EQ(*codegen::TextSectionBytes(without_tables), TextOfObject(obj));
    EXPECT_EQ(*codegen::AllocatedSectionBytes(without_tables),
              *codegen::AllocatedSectionBytes(testing::ReadFileOrEmpty(obj)));
    if (*codegen::AllocatedSectionBytes(without_tables) !=
        *codegen::AllocatedSectionBytes(plain)) {
      ++changed;
    }
  }
  EXPECT_GT(changed, 0);  // big_switch.c's switches
}

// tuned<LEVEL;...> builds the standard pipeline with clang's own tuning
// changed as clang's flags change it: the same IR as clang-16 with the flag
// on every fixture, and an inline threshold moves the result.
TEST(TunedPipelineFidelity, MatchesClangsFlagsOnEveryFixture) {
  struct Case {
    const char* pipeline;
    std::vector<std::string> clang_flags;
  };
  const std::vector<Case> cases = {
      {"tuned<O3>", {"-O3"}},
      {"tuned<O3;no-unroll;no-interleave>", {"-O3", "-fno-unroll-loops"}},
      {"tuned<O2;no-vectorize;no-slp>",
       {"-O2", "-fno-vectorize", "-fno-slp-vectorize"}},
      {"tuned<O3;merge-functions>", {"-O3", "-Xclang", "-fmerge-functions"}},
      {"tuned<Oz;inline-threshold=-1000>",
       {"-Oz", "-mllvm", "-inline-threshold=-1000"}},
  };
  const std::string dir = testing::MakeTempDir();
  int threshold_changed = 0;
  for (const std::string& source : testing::FixturePaths()) {
    // As the wrapper compiles: the source through the frontend at the level,
    // the IR passes on clang's target machine and tuning for it.
    auto ir_count_after = [&](OptLevel level, const std::string& pipeline) {
      ir::FrontendOptions frontend;
      frontend.opt_level = level;
      llvm::LLVMContext context;
      auto module = ir::LoadModule(source, frontend, context);
      EXPECT_TRUE(module.ok()) << module.status();
      if (!module.ok()) return int64_t{-1};
      auto emitter =
          codegen::ObjectEmitter::ForModule(**module, ir::CodegenLevel(level));
      EXPECT_TRUE(emitter.ok()) << emitter.status();
      if (!emitter.ok()) return int64_t{-1};
      passes::PassRunner runner(
          PassTargetMachine(**emitter, passes::PipelineFlavor::kClang),
          passes::TuningFor(level, passes::PipelineFlavor::kClang));
      absl::Status ran = runner.Run(**module, pipeline);
      EXPECT_TRUE(ran.ok()) << ran;
      return observation::IrInstructionCount(**module);
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(source + " " + c.pipeline);
      const OptLevel level = *ir::ParseOptLevel(c.clang_flags[0]);
      std::vector<std::string> argv = {"clang-16"};
      argv.insert(argv.end(), c.clang_flags.begin(), c.clang_flags.end());
      const std::string ll = dir + "/clang.ll";
      argv.insert(argv.end(), {"-S", "-emit-llvm", source, "-o", ll});
      std::string log;
      ASSERT_EQ(testing::RunCommand(argv, &log), 0) << log;
      EXPECT_EQ(ir_count_after(level, c.pipeline), IrCountOfFile(ll));
    }
    if (ir_count_after(OptLevel::kO3, "tuned<O3;inline-threshold=3000>") !=
        ir_count_after(OptLevel::kO3, "default<O3>")) {
      ++threshold_changed;
    }
  }
  EXPECT_GT(threshold_changed, 0);
}

TEST(ModuleFidelity, OzMatchesOptOnEveryFixture) {
  const std::string dir = testing::MakeTempDir();
  for (const std::string& source : testing::FixturePaths()) {
    SCOPED_TRACE(source);
    std::string log;
    const std::string bc = dir + "/in.bc", ll = dir + "/opt.ll";
    ASSERT_EQ(testing::RunCommand(
                  {"clang-16", "-Oz", "-Xclang", "-disable-llvm-passes", "-c",
                   "-emit-llvm", source, "-o", bc},
                  &log),
              0)
        << log;
    ASSERT_EQ(testing::RunCommand(
                  {"opt-16", "-passes=default<Oz>", bc, "-S", "-o", ll}, &log),
              0)
        << log;
    auto baselines = FileBaselines(bc, ir::FrontendOptions{}, {OptLevel::kOz});
    ASSERT_TRUE(baselines.ok()) << baselines.status();
    EXPECT_EQ((*baselines)[0].ir_count, IrCountOfFile(ll));
  }
}

TEST(Baselines, OzIsSmallerThanO0AndMissingFileIsAnError) {
  auto baselines = SourceBaselines("compiler_driver/fixtures/sorting.c",
                                   ir::FrontendOptions{});
  ASSERT_TRUE(baselines.ok()) << baselines.status();
  ASSERT_EQ(baselines->size(), 6u);
  EXPECT_LT(baselines->back().text_size, baselines->front().text_size);
  EXPECT_LT(baselines->back().ir_count, baselines->front().ir_count);
  auto missing = SourceBaselines("no/such/file.c", ir::FrontendOptions{});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no/such/file.c"),
            std::string::npos);
}

// An inline asm label defined twice once -Oz inlines its function: LLVM's
// default handler printed the error and called exit(1), ending the search
// worker that computed the baseline, for every job that came back.
TEST(BaselinesTest, AnLlvmErrorIsAStatusNotAnExit) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/dup.c";
  std::ofstream(source)
      << ("static inline __attribute__((always_inline)) void f(void) {\n"
          "  __asm__ volatile(\"mylabel_x: nop\");\n"
          "}\n"
          "int main(void) { f(); f(); return 0; }\n");
  absl::StatusOr<std::vector<Baseline>> from_source =
      FileBaselines(source, ir::FrontendOptions{}, {OptLevel::kOz});
  ASSERT_FALSE(from_source.ok());
  EXPECT_NE(from_source.status().message().find("already defined"),
            std::string::npos)
      << from_source.status();
  EXPECT_NE(from_source.status().message().find(source), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::session
