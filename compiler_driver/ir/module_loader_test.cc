#include "compiler_driver/ir/module_loader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/ir/module_hash.h"
#include "llvm/IR/Attributes.h"

namespace phaseloop::ir {
namespace {

constexpr char kSource[] = "compiler_driver/fixtures/sorting.c";

bool AnyDefinitionHas(const llvm::Module& m, llvm::Attribute::AttrKind kind) {
  for (const llvm::Function& f : m) {
    if (!f.isDeclaration() && f.hasFnAttribute(kind)) return true;
  }
  return false;
}

TEST(ModuleLoader, RealBuildKeepsSizeAttributesAndInlinability) {
  llvm::LLVMContext context;
  FrontendOptions options;
  options.opt_level = OptLevel::kOz;
  auto module = LoadModule(kSource, options, context);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(AnyDefinitionHas(**module, llvm::Attribute::MinSize));
  EXPECT_TRUE(AnyDefinitionHas(**module, llvm::Attribute::OptimizeForSize));
  EXPECT_FALSE(AnyDefinitionHas(**module, llvm::Attribute::NoInline));
}

TEST(ModuleLoader, ResearchConventionIsNoinlineWithoutSizeAttributes) {
  llvm::LLVMContext context;
  FrontendOptions options;
  options.convention = ModuleConvention::kResearch;
  auto module = LoadModule(kSource, options, context);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(AnyDefinitionHas(**module, llvm::Attribute::NoInline));
  EXPECT_FALSE(AnyDefinitionHas(**module, llvm::Attribute::MinSize));
  EXPECT_FALSE(AnyDefinitionHas(**module, llvm::Attribute::OptimizeNone));
}

TEST(ModuleLoader, BitcodeAndTextRoundTripToTheSameHash) {
  llvm::LLVMContext context;
  auto module = LoadModule(kSource, FrontendOptions{}, context);
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string hash = ModuleHash(**module);
  EXPECT_EQ(hash.size(), 32u);
  auto from_bc = ParseModule(ModuleBitcode(**module), "bc", context);
  ASSERT_TRUE(from_bc.ok()) << from_bc.status();
  EXPECT_EQ(ModuleHash(**from_bc), hash);
  auto from_ll = ParseModule(ModuleText(**module), "ll", context);
  ASSERT_TRUE(from_ll.ok()) << from_ll.status();
  EXPECT_EQ(ModuleHash(**from_ll), hash);
}

TEST(ModuleLoader, OnlyTheSourceFileNameReachesTheLocationFreeHash) {
  // Checkouts at other paths give modules that differ only in
  // source_filename's directory: the outcome cache's key ignores it.
  llvm::LLVMContext context;
  auto module = LoadModule(kSource, FrontendOptions{}, context);
  ASSERT_TRUE(module.ok()) << module.status();
  llvm::Module& m = **module;
  std::vector<std::string> hashes, location_free;
  for (const char* name : {"/home/ci/work/src/sorting.c", "src/sorting.c",
                           "sorting.c", "/home/ci/work/src/other.c"}) {
    m.setSourceFileName(name);
    hashes.push_back(ModuleStateHash(m));
    location_free.push_back(ModuleStateHashIgnoringSourceDirectory(m));
    EXPECT_EQ(m.getSourceFileName(), name);  // restored
    EXPECT_EQ(ModuleStateHash(m), hashes.back());
  }
  EXPECT_NE(hashes[0], hashes[1]);
  EXPECT_NE(hashes[1], hashes[2]);
  EXPECT_EQ(location_free[0], location_free[1]);
  EXPECT_EQ(location_free[1], location_free[2]);
  EXPECT_EQ(location_free[2], hashes[2]);  // no directory: the hash itself
  EXPECT_NE(location_free[3], location_free[0]);  // another file's name
}

TEST(ModuleLoader, ErrorsNameTheInput) {
  llvm::LLVMContext context;
  auto missing = LoadModule("missing/file.c", FrontendOptions{}, context);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing/file.c"),
            std::string::npos);

  auto garbage = ParseModule("this is not IR", "junk.ll", context);
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("junk.ll"), std::string::npos);

  auto bad_bitcode =
      ParseModule(std::string("BC\xC0\xDE garbage", 12), "bad.bc", context);
  ASSERT_FALSE(bad_bitcode.ok());
  EXPECT_NE(bad_bitcode.status().message().find("bad.bc"), std::string::npos);

  auto unverifiable = ParseModule("define i32 @f(i32 %x) {\n  ret i32 %y\n}\n",
                                  "undef.ll", context);
  EXPECT_FALSE(unverifiable.ok());

  FrontendOptions options;
  options.extra_args = {"-include", "no/such/header.h"};
  auto broken = CompileToBitcode(kSource, options);
  EXPECT_FALSE(broken.ok());

  // A .bc without bitcode's magic is said to be one, not parsed as text.
  const std::string dir = phaseloop::testing::MakeTempDir();
  for (const std::string& bytes : {std::string(""), std::string("BC"),
                                   std::string("define void @f() {}\n")}) {
    std::ofstream(dir + "/m.bc", std::ios::binary) << bytes;
    auto not_bitcode = LoadModule(dir + "/m.bc", FrontendOptions{}, context);
    ASSERT_FALSE(not_bitcode.ok()) << bytes;
    EXPECT_NE(not_bitcode.status().message().find("is not LLVM bitcode"),
              std::string::npos)
        << not_bitcode.status();
  }

  // Refused by its name before anything is read (it read gigabytes first).
  auto device = LoadModule("/dev/zero", FrontendOptions{}, context);
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("neither a C/C++ source"),
            std::string::npos);
}

// A path with a NUL byte would open another file (the part before the
// NUL); a directory would read as empty (policy_file_fuzzer).
TEST(ModuleLoader, ReadFileRefusesNulBytesAndDirectories) {
  const std::string dir = ::testing::TempDir();
  auto nul = ReadFile(dir + std::string("\0x", 2));
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(nul.status().message().find("NUL byte"), std::string::npos)
      << nul.status();
  auto directory = ReadFile(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("is a directory"),
            std::string::npos)
      << directory.status();
}

}  // namespace
}  // namespace phaseloop::ir
