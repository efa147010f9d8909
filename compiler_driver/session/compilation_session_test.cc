#include "compiler_driver/session/compilation_session.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "compiler_driver/codegen/object_emitter.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace phaseloop::session {
namespace {

constexpr char kFixture[] = "compiler_driver/fixtures/hashtable.c";

std::unique_ptr<CompilationSession> StartOrDie(const std::string& path) {
  auto session = CompilationSession::StartFromFile(path, ir::FrontendOptions{},
                                                   SessionOptions{});
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

int ActionOrDie(const std::string& name) {
  auto index = passes::ActionSpace::Llvm16().Find(name);
  EXPECT_TRUE(index.has_value()) << name;
  return index.value_or(0);
}

TEST(CompilationSession, StepsChangeObservationsAndRecordHistory) {
  auto session = StartOrDie(kFixture);
  ASSERT_NE(session, nullptr);
  const int64_t before = session->IrCount();
  const std::string start = session->StateHash();
  EXPECT_EQ(start, session->StartHash());
  ASSERT_TRUE(
      session->Step({ActionOrDie("sroa"), ActionOrDie("instcombine")}).ok());
  EXPECT_LT(session->IrCount(), before);
  EXPECT_NE(session->StateHash(), start);
  EXPECT_EQ(session->history(), (std::vector<int>{ActionOrDie("sroa"),
                                                  ActionOrDie("instcombine")}));
  auto text = session->TextSize();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_GT(*text, 0);
  EXPECT_EQ(session->Autophase()[51], session->IrCount());  // TotalInsts
}

TEST(CompilationSession, ReplayingHistoryReproducesTheHash) {
  auto first = StartOrDie(kFixture);
  ASSERT_NE(first, nullptr);
  for (const char* name : {"sroa", "simplifycfg", "inline", "gvn", "licm",
                           "loop-unroll", "instcombine", "globaldce"}) {
    ASSERT_TRUE(first->Step(ActionOrDie(name)).ok()) << name;
  }
  auto second = StartOrDie(kFixture);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(second->Step(first->history()).ok());
  EXPECT_EQ(second->StateHash(), first->StateHash());
  EXPECT_EQ(second->IrCount(), first->IrCount());
}

TEST(CompilationSession, ForkIsADeepCopy) {
  auto parent = StartOrDie(kFixture);
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(parent->Step(ActionOrDie("sroa")).ok());
  const std::string parent_hash = parent->StateHash();
  const int64_t parent_count = parent->IrCount();
  auto child = parent->Fork();
  EXPECT_EQ(child->StateHash(), parent_hash);
  EXPECT_EQ(child->history(), parent->history());
  ASSERT_TRUE(child->Step(ActionOrDie("instcombine")).ok());
  EXPECT_NE(child->StateHash(), parent_hash);
  // The parent is untouched, and recomputing its hash agrees with the cache.
  EXPECT_EQ(parent->IrCount(), parent_count);
  auto replay = StartOrDie(kFixture);
  ASSERT_TRUE(replay->Step(ActionOrDie("sroa")).ok());
  EXPECT_EQ(replay->StateHash(), parent_hash);
}

// Both sizes of the object an independent emitter makes of the session's
// current module.
codegen::ObjectSizes FreshSizes(const CompilationSession& session) {
  auto emitter = codegen::ObjectEmitter::ForModule(
      session.module(), ir::CodegenLevel(session.options().opt_level));
  EXPECT_TRUE(emitter.ok()) << emitter.status();
  if (!emitter.ok()) return {};
  auto object = (*emitter)->EmitObject(llvm::CloneModule(session.module()));
  EXPECT_TRUE(object.ok()) << object.status();
  if (!object.ok()) return {};
  auto sizes = codegen::MeasureObjectSizes(*object);
  EXPECT_TRUE(sizes.ok()) << sizes.status();
  return sizes.ok() ? *sizes : codegen::ObjectSizes{};
}

TEST(CompilationSession, AllocSizeIsTheWholeObjectOfTheCurrentState) {
  auto session = StartOrDie(kFixture);
  ASSERT_NE(session, nullptr);
  for (const std::vector<const char*>& actions :
       std::vector<std::vector<const char*>>{
           {}, {"sroa", "instcombine"}, {"simplifycfg", "gvn"}}) {
    for (const char* name : actions) {
      ASSERT_TRUE(session->Step(ActionOrDie(name)).ok()) << name;
    }
    const codegen::ObjectSizes fresh = FreshSizes(*session);
    auto text = session->TextSize();
    auto alloc = session->AllocSize();
    ASSERT_TRUE(text.ok()) << text.status();
    ASSERT_TRUE(alloc.ok()) << alloc.status();
    EXPECT_EQ(*text, fresh.text_size);
    EXPECT_EQ(*alloc, fresh.alloc_size);
    // .rodata, .data and .eh_frame are allocated too.
    EXPECT_GT(*alloc, *text);
    // A fork carries the measurement of the same state.
    EXPECT_EQ(*session->Fork()->AllocSize(), fresh.alloc_size);
  }
}

TEST(CompilationSession, RejectsActionsOutsideTheSpace) {
  auto session = StartOrDie(kFixture);
  ASSERT_NE(session, nullptr);
  absl::Status status = session->Step(100000);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(session->history().empty());
}

TEST(CompilationSession, BadInputsAreClearErrors) {
  auto missing = CompilationSession::StartFromFile(
      "does/not/exist.ll", ir::FrontendOptions{}, SessionOptions{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("does/not/exist.ll"),
            std::string::npos);

  // IR for a target without a backend here: an error, not a crash (the
  // context was freed before the module).
  const std::string ir =
      std::string(std::getenv("TEST_TMPDIR")) + "/bogus-target.ll";
  std::ofstream(ir) << "target triple = \"bogus-unknown-thing\"\n"
                       "define i32 @f() {\n  ret i32 0\n}\n";
  auto foreign = CompilationSession::StartFromFile(ir, ir::FrontendOptions{},
                                                   SessionOptions{});
  ASSERT_FALSE(foreign.ok());
}

}  // namespace
}  // namespace phaseloop::session
