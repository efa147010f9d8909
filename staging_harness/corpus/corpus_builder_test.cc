#include "staging_harness/corpus/corpus_builder.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "compiler_driver/ir/module_loader.h"
#include "compiler_driver/session/compilation_session.h"
#include "gtest/gtest.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "staging_harness/corpus/corpus_test_util.h"

namespace phaseloop::corpus {
namespace {

namespace fs = std::filesystem;
using testing::FreshDir;
using testing::WriteSource;

// A small tree of C programs: a multi-file program, two single-file
// programs sharing a helper, a library directory, a directory with a
// duplicate definition, a file that does not compile and a test dir.
fs::path MakeTree(const std::string& name, bool extra_program = false) {
  const fs::path root = FreshDir(name) / "demo";
  WriteSource(root, "multi/main.c",
              "int helper(int);\nint main(int c, char** v) {\n"
              "  (void)v;\n  return helper(c);\n}\n");
  WriteSource(root, "multi/helper.c",
              "int util(int);\nint helper(int x) { return util(x) + 1; }\n");
  WriteSource(
      root, "multi/util.c",
      "int util(int x) { int s = 0; for (int i = 0; i < x; ++i) "
      "s += i * x; return s; }\nint unused_util(int y) { return y * 3; }\n");
  WriteSource(root, "one.c",
              "#include <stdio.h>\nint main(void) {\n"
              "  printf(\"one\\n\");\n  return 0;\n}\n");
  WriteSource(root, "two.c",
              "int shared(int);\nint main(void) { "
              "return shared(2); }\n");
  WriteSource(root, "shared.c",
              "static int sq(int x) { return x * x; }\n"
              "int shared(int x) { return sq(x) - 4; }\n");
  WriteSource(root, "broken.c",
              "int main(void) { return undeclared_thing; }\n");
  WriteSource(root, "lib/a.c", "int lib_a(int x) { return x + 1; }\n");
  WriteSource(root, "lib/b.c",
              "int lib_a(int);\n"
              "int lib_b(int x) { return lib_a(x) * 2; }\n");
  WriteSource(root, "dup/x1.c", "int f(void) { return 1; }\n");
  WriteSource(root, "dup/x2.c", "int f(void) { return 2; }\n");
  WriteSource(root, "tests/check.c", "int main(void) { return 1; }\n");
  // Compiles only with the define its directory's flags file gives.
  WriteSource(root, "needs/main.c",
              "#ifndef NEEDED\n#error NEEDED is not defined\n#endif\n"
              "int main(void) { return NEEDED; }\n");
  WriteSource(root, "needs/phaseloop-cflags", "-DNEEDED=0\n");
  if (extra_program) {
    WriteSource(root, "three.c", "int main(void) { return 3; }\n");
  }
  return root;
}

std::map<std::string, v1::ModuleRecord> ByName(const Manifest& m) {
  std::map<std::string, v1::ModuleRecord> out;
  for (const v1::ModuleRecord& r : m.modules) out[r.name()] = r;
  return out;
}

CorpusSettings Settings() {
  CorpusSettings s;
  s.jobs = 2;
  return s;
}

absl::StatusOr<Manifest> Build(const fs::path& root, const fs::path& out,
                               const CorpusSettings& settings) {
  std::ostringstream progress;
  return BuildModules({{root.string(), "demo", "dir:" + root.string()}},
                      settings, out.string(), progress);
}

std::unique_ptr<llvm::Module> Load(const fs::path& out,
                                   const v1::ModuleRecord& r,
                                   llvm::LLVMContext& context) {
  auto module = ir::LoadModule((out / r.bitcode_path()).string(), {}, context);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

class CorpusBuilderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new fs::path(MakeTree("builder"));
    out_ = new fs::path(FreshDir("builder_out"));
    auto built = Build(*root_, *out_, Settings());
    ASSERT_TRUE(built.ok()) << built.status();
    manifest_ = new Manifest(*std::move(built));
  }
  static fs::path* root_;
  static fs::path* out_;
  static Manifest* manifest_;
};
fs::path* CorpusBuilderTest::root_ = nullptr;
fs::path* CorpusBuilderTest::out_ = nullptr;
Manifest* CorpusBuilderTest::manifest_ = nullptr;

TEST_F(CorpusBuilderTest, FindsProgramsLibrariesAndSkips) {
  auto modules = ByName(*manifest_);
  std::vector<std::string> names;
  for (const auto& [name, r] : modules) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "demo/dup", "demo/lib", "demo/multi/main",
                       "demo/needs/main", "demo/one", "demo/two"}));
  std::map<std::string, SkippedEntry> skipped;
  for (const SkippedEntry& s : manifest_->skipped) skipped[s.name] = s;
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_EQ(skipped["demo/broken"].kind, "source");
  // Left out before compiling, and listed with the reason.
  EXPECT_EQ(skipped["demo/tests"].kind, "directory");
  EXPECT_NE(skipped["demo/tests"].reason.find("tests"), std::string::npos);
  EXPECT_NE(skipped["demo/broken"].reason.find("undeclared_thing"),
            std::string::npos);
  EXPECT_NE(skipped["demo/dup/x2"].reason.find("'f'"), std::string::npos);
}

// A program whose -Oz baseline fails to assemble (an inline asm label
// defined twice once inlined) was stored with a baseline size from the
// failed object, and every search of it failed: it is left out, with why.
TEST(CorpusBuilderErrors, AModuleWhoseBaselineLlvmRefusesIsLeftOut) {
  const fs::path root = FreshDir("asm_root");
  WriteSource(root, "dup.c",
              "static inline __attribute__((always_inline)) void f(void) {\n"
              "  __asm__ volatile(\"mylabel_x: nop\");\n"
              "}\n"
              "int main(void) { f(); f(); return 0; }\n");
  WriteSource(root, "fine.c", "int main(void) { return 0; }\n");
  auto built = Build(root, FreshDir("asm_out"), Settings());
  ASSERT_TRUE(built.ok()) << built.status();
  auto modules = ByName(*built);
  EXPECT_EQ(modules.count("demo/fine"), 1u);
  EXPECT_EQ(modules.count("demo/dup"), 0u);
  ASSERT_EQ(built->skipped.size(), 1u);
  EXPECT_NE(built->skipped[0].reason.find("already defined"), std::string::npos)
      << built->skipped[0].reason;
}

TEST_F(CorpusBuilderTest, LinksWhatEachProgramNeeds) {
  auto modules = ByName(*manifest_);
  llvm::LLVMContext context;
  auto multi = Load(*out_, modules["demo/multi/main"], context);
  ASSERT_NE(multi, nullptr);
  for (const char* fn : {"main", "helper", "util"}) {
    ASSERT_NE(multi->getFunction(fn), nullptr) << fn;
    EXPECT_FALSE(multi->getFunction(fn)->isDeclaration()) << fn;
  }
  EXPECT_EQ(multi->getFunction("unused_util"), nullptr);
  auto one = Load(*out_, modules["demo/one"], context);
  auto two = Load(*out_, modules["demo/two"], context);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(one->getFunction("shared"), nullptr);
  ASSERT_NE(two->getFunction("shared"), nullptr);
  EXPECT_FALSE(two->getFunction("shared")->isDeclaration());
  auto lib = Load(*out_, modules["demo/lib"], context);
  ASSERT_NE(lib, nullptr);
  EXPECT_FALSE(lib->getFunction("lib_a")->isDeclaration());
  EXPECT_FALSE(lib->getFunction("lib_b")->isDeclaration());
  // Real-build modules keep clang -Oz's attributes; no machine paths.
  EXPECT_TRUE(
      multi->getFunction("util")->hasFnAttribute(llvm::Attribute::MinSize));
  EXPECT_EQ(multi->getSourceFileName(), "demo/multi/main");
}

TEST_F(CorpusBuilderTest, RecordsMatchTheSessionAndTheBaselines) {
  for (const v1::ModuleRecord& r : manifest_->modules) {
    SCOPED_TRACE(r.name());
    EXPECT_EQ(r.convention(), "real-build");
    EXPECT_EQ(r.opt_level(), "Oz");
    EXPECT_EQ(r.origin(), "dir:" + root_->string());
    EXPECT_EQ(r.split(), SplitForName(r.name()));
    EXPECT_GT(r.ir_count_o0(), 0);
    EXPECT_GT(r.ir_count_oz(), 0);
    EXPECT_GT(r.ir_count_o3(), 0);
    EXPECT_LE(r.ir_count_oz(), r.ir_count_o0());
    EXPECT_GT(r.text_size_oz(), 0);
    EXPECT_GT(r.text_size_o3(), 0);
    // The module_hash is what a session started on the stored file reports.
    auto session = session::CompilationSession::StartFromFile(
        (*out_ / r.bitcode_path()).string(), ir::FrontendOptions{},
        session::SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status();
    EXPECT_EQ((*session)->StartHash(), r.module_hash());
  }
}

TEST_F(CorpusBuilderTest, DeterministicAndSplitsStableAsTheCorpusGrows) {
  const fs::path root = MakeTree("builder_grown", /*extra_program=*/true);
  const fs::path out = FreshDir("builder_grown_out");
  auto grown = Build(root, out, Settings());
  ASSERT_TRUE(grown.ok()) << grown.status();
  auto before = ByName(*manifest_);
  auto after = ByName(*grown);
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_EQ(after.count("demo/three"), 1u);
  for (const auto& [name, r] : before) {
    EXPECT_EQ(after[name].split(), r.split()) << name;
    // Same sources in another directory: the same module, byte for byte.
    EXPECT_EQ(after[name].module_hash(), r.module_hash()) << name;
  }
}

// __DATE__/__TIME__ expand to the settings' SOURCE_DATE_EPOCH, not to the
// time of the build: a corpus rebuilt later has the same module hashes.
TEST_F(CorpusBuilderTest, DateAndTimeMacrosFollowSourceDateEpoch) {
  const fs::path root = FreshDir("builder_dated") / "demo";
  WriteSource(root, "banner.c",
              "#include <stdio.h>\nint main(void) {\n"
              "  puts(\"built \" __DATE__ \" \" __TIME__);\n  return 0;\n}\n");
  std::map<std::string, std::string> hashes;
  for (const std::string epoch : {"0", "86400"}) {
    CorpusSettings settings = Settings();
    settings.source_date_epoch = epoch;
    const fs::path out = FreshDir("builder_dated_out_" + epoch);
    auto built = Build(root, out, settings);
    ASSERT_TRUE(built.ok()) << built.status();
    ASSERT_EQ(built->modules.size(), 1u);
    llvm::LLVMContext context;
    auto module = Load(out, built->modules[0], context);
    ASSERT_NE(module, nullptr);
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, nullptr);
    EXPECT_NE(os.str().find(epoch == "0" ? "built Jan  1 1970 00:00:00"
                                         : "built Jan  2 1970 00:00:00"),
              std::string::npos)
        << epoch;
    hashes[epoch] = built->modules[0].module_hash();
  }
  EXPECT_NE(hashes["0"], hashes["86400"]);
  // And the default settings pin it too (to 0).
  auto again = Build(root, FreshDir("builder_dated_again"), Settings());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->modules[0].module_hash(), hashes["0"]);
}

// A directory with config.h gets `-include <absolute path>`, which shifts
// clang's source offsets (inline asm !srcloc) with the length of the build
// directory: the same sources built elsewhere must still be the same module.
TEST_F(CorpusBuilderTest, InlineAsmModulesDoNotDependOnTheBuildDirectory) {
  std::vector<std::string> hashes;
  for (const std::string dir : {"asm", "asm_in_a_much_longer_directory"}) {
    const fs::path root = FreshDir(dir) / "demo";
    WriteSource(root, "config.h", "#define ANSWER 42\n");
    // The asm sits in a header: files entered after the predefines buffer
    // are the ones whose offsets move.
    WriteSource(
        root, "spin.h",
        "static inline void spin(void) { __asm__ volatile(\"nop\"); }\n");
    WriteSource(root, "spin.c",
                "#include \"spin.h\"\n"
                "int main(void) {\n  spin();\n  return ANSWER - 42;\n}\n");
    auto built = Build(root, FreshDir(dir + "_out"), Settings());
    ASSERT_TRUE(built.ok()) << built.status();
    ASSERT_EQ(built->modules.size(), 1u) << dir;
    hashes.push_back(built->modules[0].module_hash());
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

TEST_F(CorpusBuilderTest, ResearchConventionGivesNoinlineFunctions) {
  CorpusSettings research = Settings();
  research.convention = ir::ModuleConvention::kResearch;
  const fs::path out = FreshDir("builder_research_out");
  auto built = Build(*root_, out, research);
  ASSERT_TRUE(built.ok()) << built.status();
  auto modules = ByName(*built);
  ASSERT_EQ(modules.count("demo/multi/main"), 1u);
  EXPECT_EQ(modules["demo/multi/main"].convention(), "research");
  EXPECT_EQ(modules["demo/multi/main"].opt_level(), "O0");
  llvm::LLVMContext context;
  auto multi = Load(out, modules["demo/multi/main"], context);
  ASSERT_NE(multi, nullptr);
  const llvm::Function* util = multi->getFunction("util");
  EXPECT_TRUE(util->hasFnAttribute(llvm::Attribute::NoInline));
  EXPECT_FALSE(util->hasFnAttribute(llvm::Attribute::MinSize));
  EXPECT_FALSE(util->hasFnAttribute(llvm::Attribute::OptimizeNone));
}

TEST_F(CorpusBuilderTest, CommitMergesAndRejectsAnotherKindOfCorpus) {
  const fs::path out = FreshDir("builder_commit_out");
  auto corpus = OpenCorpus(out.string(), Settings());
  ASSERT_TRUE(corpus.ok());
  auto built = Build(*root_, out, Settings());
  ASSERT_TRUE(built.ok());
  ASSERT_TRUE(
      CommitCorpus(out.string(), *corpus, *built, {"dir:" + root_->string()})
          .ok());
  auto read = ReadManifest(out.string());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->modules.size(), built->modules.size());
  CorpusSettings speed = Settings();
  speed.objective = "speed";
  EXPECT_TRUE(
      absl::IsInvalidArgument(OpenCorpus(out.string(), speed).status()));
  EXPECT_TRUE(OpenCorpus(out.string(), Settings()).ok());
}

// A source tree given as --out got manifest.json and modules/ among its
// files without a word; an empty directory, or one holding only a build's
// own leftovers (hidden, modules/), is still a new corpus.
TEST_F(CorpusBuilderTest, ADirectoryOfOtherFilesIsNoCorpus) {
  const fs::path out = FreshDir("builder_other_files");
  fs::create_directories(out / ".sources");
  fs::create_directories(out / "modules");
  EXPECT_TRUE(OpenCorpus(out.string(), Settings()).ok());
  std::ofstream(out / "main.c") << "int main(void) { return 0; }\n";
  const absl::Status refused = OpenCorpus(out.string(), Settings()).status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_NE(refused.message().find("holds other files (main.c)"),
            std::string::npos)
      << refused;
}

}  // namespace
}  // namespace phaseloop::corpus
