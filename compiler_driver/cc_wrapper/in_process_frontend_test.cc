#include "compiler_driver/cc_wrapper/in_process_frontend.h"

#include <fstream>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "compiler_driver/ir/module_hash.h"
#include "compiler_driver/testing/fixture_paths.h"
#include "gtest/gtest.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace phaseloop::cc_wrapper {
namespace {

// With the target registered, as in the wrapper, the bitcode carries the
// same symbol table clang writes.
std::string Bitcode(const llvm::Module& module) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmParser();
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  llvm::WriteBitcodeToFile(module, out, /*ShouldPreserveUseListOrder=*/true);
  out.flush();
  return bytes;
}

bool IsCxx(const std::string& path) {
  return path.size() > 3 && path.substr(path.size() - 3) == ".cc";
}

// The module in memory is the module the clang binary writes with the same
// arguments: their bitcode, and so module_hash, is identical on every
// fixture, and the dependency files are the same.
TEST(InProcessFrontendTest, EqualsTheClangBinaryOnEveryFixture) {
  const std::string dir = testing::MakeTempDir();
  for (const std::string& source : testing::FixturePaths()) {
    SCOPED_TRACE(source);
    const bool cxx = IsCxx(source);
    const std::string clang = cxx ? "clang++-16" : "clang-16";
    std::vector<std::string> common = {
        "-O2", "-g",         "-c",      source,
        "-MD", "-emit-llvm", "-Xclang", "-disable-llvm-passes",
        "-MQ", "x.o"};
    if (cxx) common.push_back("-std=c++20");
    std::vector<std::string> binary = {clang};
    binary.insert(binary.end(), common.begin(), common.end());
    for (const char* extra : {"-MF", "", "-o", ""}) binary.push_back(extra);
    binary[binary.size() - 3] = dir + "/binary.d";
    binary[binary.size() - 1] = dir + "/binary.bc";
    std::string output;
    ASSERT_EQ(testing::RunCommand(binary, &output), 0) << output;

    std::vector<std::string> in_process = common;
    for (const std::string& extra :
         {std::string("-MF"), dir + "/in_process.d", std::string("-o"),
          std::string(kBitcodePlaceholder)}) {
      in_process.push_back(extra);
    }
    llvm::LLVMContext context;
    InProcessFrontendRun run =
        RunFrontendInProcess(clang, cxx, in_process, context);
    ASSERT_NE(run.module, nullptr) << run.error << run.diagnostics;
    EXPECT_EQ(ir::ContentHash(Bitcode(*run.module)),
              ir::ContentHash(testing::ReadFileOrEmpty(dir + "/binary.bc")));
    EXPECT_EQ(testing::ReadFileOrEmpty(dir + "/in_process.d"),
              testing::ReadFileOrEmpty(dir + "/binary.d"));
  }
}

TEST(InProcessFrontendTest, ErrorsAreCapturedNotPrinted) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/bad.c";
  ASSERT_TRUE(
      testing::RunCommand(
          {"sh", "-c", "printf 'int f(void) { return nope; }\\n' > " + source},
          nullptr) == 0);
  llvm::LLVMContext context;
  InProcessFrontendRun run =
      RunFrontendInProcess("clang-16", false,
                           {"-O2", "-c", source, "-emit-llvm", "-Xclang",
                            "-disable-llvm-passes", "-o", kBitcodePlaceholder},
                           context);
  EXPECT_EQ(run.module, nullptr);
  EXPECT_NE(run.error.find("frontend_failed"), std::string::npos);
  EXPECT_NE(run.diagnostics.find("use of undeclared identifier 'nope'"),
            std::string::npos)
      << run.diagnostics;
}

// clang 16 prints -Wunsafe-buffer-usage's notes in an order that depends
// on its heap, so a run that emits them fails (the wrapper then runs the
// clang binary), however the warning was turned on: flag or pragma.
TEST(InProcessFrontendTest, UnsafeBufferUsageWarningsFailTheRun) {
  const std::string dir = testing::MakeTempDir();
  const std::string source = dir + "/buffers.c";
  std::ofstream(source)
      << "#pragma clang diagnostic warning \"-Wunsafe-buffer-usage\"\n"
         "int sum(const int *p, int n) {\n"
         "  int s = 0;\n"
         "  for (int i = 0; i < n; ++i) s += p[i] + p[n - 1 - i];\n"
         "  return s;\n"
         "}\n";
  const std::vector<std::string> args = {"-O2",     "-c",
                                         source,    "-emit-llvm",
                                         "-Xclang", "-disable-llvm-passes",
                                         "-o",      kBitcodePlaceholder};
  llvm::LLVMContext context;
  InProcessFrontendRun run =
      RunFrontendInProcess("clang-16", false, args, context);
  EXPECT_EQ(run.module, nullptr);
  EXPECT_EQ(run.error.rfind("unstable_diagnostics:", 0), 0u) << run.error;
  EXPECT_NE(run.diagnostics.find("note: used in buffer access here"),
            std::string::npos)
      << run.diagnostics;
  // The flag: with it the run fails, without it the source compiles.
  std::ofstream(source) << "int at(const int *p, int n) { return p[n]; }\n";
  std::vector<std::string> flagged = args;
  flagged.insert(flagged.begin(), "-Wunsafe-buffer-usage");
  run = RunFrontendInProcess("clang-16", false, flagged, context);
  EXPECT_EQ(run.module, nullptr);
  EXPECT_EQ(run.error.rfind("unstable_diagnostics:", 0), 0u) << run.error;
  run = RunFrontendInProcess("clang-16", false, args, context);
  EXPECT_NE(run.module, nullptr) << run.error;
}

TEST(InProcessFrontendTest, MissingClangIsAnError) {
  llvm::LLVMContext context;
  InProcessFrontendRun run =
      RunFrontendInProcess("no-such-clang-16", false, {"-c", "x.c"}, context);
  EXPECT_EQ(run.module, nullptr);
  EXPECT_NE(run.error.find("cannot find no-such-clang-16"), std::string::npos);
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
