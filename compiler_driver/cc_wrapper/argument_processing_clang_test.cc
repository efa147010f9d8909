// Checks argument_processing's dependency-file handling against the real
// clang-16: plain clang and the jobs' frontend runs must write byte-identical
// .d files (names, targets, quoting, system headers).

#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "gtest/gtest.h"

namespace phaseloop::cc_wrapper {
namespace {

using Args = std::vector<std::string>;

namespace fs = std::filesystem;

// Runs clang-16 with `args` in `dir`; returns its exit code.
int RunClangIn(const std::string& dir, const Args& args, std::string* output) {
  Args argv = {"sh", "-c", "cd \"$0\" && exec clang-16 \"$@\"", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return phaseloop::testing::RunCommand(argv, output);
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// The sources every case compiles, under `dir`.
void WriteTree(const std::string& dir) {
  for (const char* sub : {"/src", "/out", "/bc"})
    fs::create_directories(dir + sub);
  WriteFile(dir + "/src/h.h", "#define VALUE 1\n");
  WriteFile(dir + "/src/a.c",
            "#include \"h.h\"\nint a(void) { return VALUE; }\n");
  WriteFile(dir + "/src/b.c",
            "#include <stddef.h>\n#include \"h.h\"\n"
            "size_t b(void) { return VALUE; }\n");
}

// Every .d file under `dir`: path relative to `dir` -> contents.
std::map<std::string, std::string> DependencyFiles(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    // Not path::extension(): clang names the file of "-o out/.hidden"
    // "out/.d", which has no extension for std::filesystem.
    const std::string path = entry.path().string();
    if (entry.is_regular_file() && path.size() > 2 &&
        path.compare(path.size() - 2, 2, ".d") == 0) {
      files[fs::relative(entry.path(), dir).string()] =
          phaseloop::testing::ReadFileOrEmpty(path);
    }
  }
  return files;
}

struct DependencyCase {
  Args args;
  std::vector<std::string> dependency_files;  // what plain clang writes
};

void PrintTo(const DependencyCase& c, std::ostream* os) {
  for (const std::string& arg : c.args) *os << "'" << arg << "' ";
}

class RealClangDependencyTest
    : public ::testing::TestWithParam<DependencyCase> {};

// Plain clang-16 and the jobs' frontend runs (with the placeholder replaced)
// write the same .d files, byte for byte.
TEST_P(RealClangDependencyTest, FrontendWritesTheSameDependencyFiles) {
  const DependencyCase& c = GetParam();
  const std::string root = phaseloop::testing::MakeTempDir();
  ASSERT_FALSE(root.empty());
  const std::string plain = root + "/plain";
  const std::string wrapped = root + "/wrapped";
  WriteTree(plain);
  WriteTree(wrapped);

  std::string output;
  ASSERT_EQ(RunClangIn(plain, c.args, &output), 0) << output;
  const std::map<std::string, std::string> expected = DependencyFiles(plain);
  std::vector<std::string> names;
  for (const auto& [name, content] : expected) names.push_back(name);
  EXPECT_EQ(names, c.dependency_files);

  const ProcessedArgs processed =
      ProcessArguments(c.args, c.args, DriverKind::kC);
  ASSERT_TRUE(std::holds_alternative<Compilation>(processed.result));
  const Compilation& compilation = std::get<Compilation>(processed.result);
  ASSERT_FALSE(compilation.jobs.empty());
  for (std::size_t i = 0; i < compilation.jobs.size(); ++i) {
    Args frontend = compilation.jobs[i].frontend_args;
    for (std::string& arg : frontend) {
      if (arg == kBitcodePlaceholder) arg = "bc/" + std::to_string(i) + ".bc";
      if (arg == kDependencyPlaceholder) {
        arg = compilation.jobs[i].dependency_file;
      }
    }
    ASSERT_EQ(RunClangIn(wrapped, frontend, &output), 0) << output;
    EXPECT_EQ(output, "") << "the frontend run warned";
  }
  EXPECT_EQ(DependencyFiles(wrapped), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RealClangDependencyTest,
    ::testing::Values(
        DependencyCase{{"-c", "-O2", "-MD", "src/a.c", "-o", "out/b.o"},
                       {"out/b.d"}},
        DependencyCase{{"-c", "-O2", "-MMD", "src/a.c"}, {"a.d"}},
        DependencyCase{{"-c", "-O2", "-MD", "src/a.c", "src/b.c"},
                       {"a.d", "b.d"}},
        DependencyCase{{"-c", "-O2", "-MD", "src/b.c", "-o", "out/we ird$#.o"},
                       {"out/we ird$#.d"}},
        DependencyCase{{"-c", "-O2", "-MD", "src/a.c", "-o", "out/noext"},
                       {"out/noext.d"}},
        DependencyCase{{"-c", "-O2", "-MD", "src/a.c", "-o", "out/.hidden"},
                       {"out/.d"}},
        DependencyCase{{"-c", "-O2", "-MD", "-MF", "out/custom.d", "src/a.c"},
                       {"out/custom.d"}},
        DependencyCase{{"-c", "-O2", "-MMD", "-MP", "-MT", "my target",
                        "src/b.c", "-o", "out/b.o"},
                       {"out/b.d"}},
        DependencyCase{{"-c", "-O2", "-MD", "-MQ", "q$ target", "-MFout/q.d",
                        "src/a.c", "src/b.c"},
                       {"out/q.d"}}));

}  // namespace
}  // namespace phaseloop::cc_wrapper
