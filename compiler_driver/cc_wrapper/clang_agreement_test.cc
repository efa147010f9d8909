// phaseloop-cc agrees with plain clang-16 on what the differential argv
// fuzzer (tests/argv_fuzz) found them to disagree on: each case runs the
// same command line with clang and with the wrapper, each in a scratch
// directory of its own holding copies of the inputs, and compares the exit
// status, the output (text and order) and every file left behind, byte for
// byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/testing/test_util.h"
#include "compiler_driver/cc_wrapper/clang_agreement_fixture.h"

namespace phaseloop::cc_wrapper {
namespace {

using clang_agreement::ClangAgreementTest;
using clang_agreement::Side;
using testing::AbsolutePath;
using testing::WrapperScratch;
namespace fs = std::filesystem;

// clang checks every input before it runs a job: with one missing it
// compiles nothing, not even the sources that exist, writes no object or
// dependency file and leaves an old object as it was.
TEST_F(ClangAgreementTest, MissingInputCompilesNothing) {
  ExpectAgreement({"-c", "-O2", "-MD", "strings.c", "missing.c"}, {"strings.c"},
                  {{"strings.o", "an old object"}});
  EXPECT_EQ(Reasons(), std::vector<std::string>{"missing_input"});
}

TEST_F(ClangAgreementTest, MissingInputFirstOrLastAndWithDependencyFlags) {
  ExpectAgreement({"-Werror", "-MD", "-c", "-MP", "-MF", "deps.d", "-Os",
                   "missing.c", "strings.c", "-MT", "target.o"},
                  {"strings.c"});
  ExpectAgreement({"-c", "-O3", "bits.c", "globals.c", "missing.c"},
                  {"bits.c", "globals.c"});
}

// The object cannot be created (-o into a directory that does not exist, or
// onto a directory): clang fails before it writes the dependency file.
TEST_F(ClangAgreementTest, NoDependencyFileWhenTheObjectCannotBeWritten) {
  ExpectAgreement(
      {"-c", "-O2", "-MD", "-MF", "deps.d", "-o", "nodir/out.o", "callbacks.c"},
      {"callbacks.c"});
  ExpectAgreement({"-c", "-O2", "-MMD", "-o", "adir", "callbacks.c"},
                  {"callbacks.c"}, {{"adir", "<dir>"}});
  // And when it can, the dependency file is clang's, byte for byte.
  ExpectAgreement({"-c", "-O2", "-MD", "-MF", "deps.d", "-o", "sub/out.o",
                   "callbacks.c", "-MP"},
                  {"callbacks.c"}, {{"sub", "<dir>"}});
}

// clang 16 prints -Wunsafe-buffer-usage's notes in an order that depends
// on its heap: the wrapper leaves them to plain clang.
TEST_F(ClangAgreementTest, UnsafeBufferUsageNotesComeInClangsOrder) {
  ExpectAgreement({"-c", "-O2", "-Wunsafe-buffer-usage", "structs.c"},
                  {"structs.c"});
  ExpectAgreement({"-c", "-Os", "-Weverything", "strings.c", "-o", "s.o"},
                  {"strings.c"});
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"unstable_diagnostics",
                                                 "unstable_diagnostics"}));
}

// -fcolor-diagnostics colours clang's diagnostics whatever stderr is (here
// a pipe): the driver's ("-lm: 'linker' input unused", "-O4 is equivalent
// to -O3") and the frontend's warnings come out coloured from the wrapper
// too (seed 1 of the fuzzer, cases 6572, 6725, 6887).
TEST_F(ClangAgreementTest, ColorDiagnosticsAreColouredOnAPipe) {
  ExpectAgreement({"-c", "-lm", "structs.c", "-fcolor-diagnostics",
                   "-Wpedantic", "-O4", "-fpie"},
                  {"structs.c"});
  ExpectAgreement(
      {"-fdiagnostics-color=always", "-Wconversion", "-O2", "-c", "w.c"}, {},
      {{"w.c", "int f(long x) { int y = x; return y; }\n"}});
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"", ""}));
}

// Outputs that are not regular files: clang writes into a device and
// through a symbolic link; the wrapper would rename a new file over them
// (as root, over /dev/null itself), so it leaves them to plain clang.
TEST_F(ClangAgreementTest, OutputsThatAreNotRegularFilesAreLeftToClang) {
  const std::string dir = wrapper_.dir();
  fs::copy_file(AbsolutePath("compiler_driver/fixtures/structs.c"),
                dir + "/structs.c");
  fs::create_symlink("/dev/null", dir + "/null.o");
  fs::create_symlink("target.d", dir + "/link.d");
  std::string output;
  EXPECT_EQ(
      wrapper_.Run({AbsolutePath(kWrapper), "--phaseloop-policy=baseline", "-c",
                    "-O2", "structs.c", "-o", "null.o", "-MD", "-MF", "link.d"},
                   {}, &output),
      0)
      << output;
  EXPECT_TRUE(fs::is_symlink(dir + "/null.o"));
  EXPECT_TRUE(fs::is_symlink(dir + "/link.d"));
  EXPECT_NE(phaseloop::testing::ReadFileOrEmpty(dir + "/target.d")
                .find("null.o: structs.c"),
            std::string::npos);
  EXPECT_EQ(wrapper_.Run({AbsolutePath(kWrapper), "--phaseloop-policy=baseline",
                          "-c", "-O2", "structs.c", "-o", "/dev/null"},
                         {}, &output),
            0)
      << output;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_EQ(Reasons(),
            (std::vector<std::string>{"special_output", "special_output"}));
}

// Options the wrapper once read wrongly: "-object-file-name=" and
// "-objcmt-*" as -o joined to a path, -MF - as a file named "-" (clang
// writes the dependencies to stdout), -H's header list (clang interleaves
// it with its diagnostics).
TEST_F(ClangAgreementTest, OptionsReadAsOthersAreLeftToClang) {
  ExpectAgreement({"-c", "-O2", "structs.c", "-object-file-name=foo.o"},
                  {"structs.c"});
  ExpectAgreement({"-c", "-O2", "structs.c", "-MD", "-MF", "-"}, {"structs.c"});
  ExpectAgreement({"-c", "-O2", "-H", "-Wconversion", "w.c"}, {},
                  {{"w.c",
                    "int f(long x) { int y = x; return y; }\n"
                    "#include <stddef.h>\n"}});
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"too_hard", "stdin_or_stdout",
                                                 "too_hard"}));
}

// On a terminal clang colours its diagnostics (when TERM has colours) and
// wraps them at COLUMNS; the wrapper's child captures stderr into a file,
// where clang's driver found no terminal: its warnings came out plain and
// unwrapped. Each side runs under script(1), its stderr a terminal.
TEST_F(ClangAgreementTest, OnATerminalDiagnosticsAreColouredAndWrapped) {
  const std::map<std::string, std::string> sources = {
      {"w.c", "int f(int x) { int unused_variable; return x; }\n"},
      {"w.cc",
       "template <class T> T f(T x) { int unused; return x; }\n"
       "int g() { return f(1); }\n"}};
  auto on_terminal = [&](const WrapperScratch& scratch,
                         const std::string& driver,
                         const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env) {
    for (const auto& [name, contents] : sources) {
      std::ofstream(scratch.dir() + "/" + name) << contents;
    }
    std::string command = driver;
    for (const std::string& arg : args) command += " '" + arg + "'";
    Side side;
    side.exit_code = scratch.Run({"script", "-qec", command, "/dev/null"}, env,
                                 &side.output);
    return side;
  };
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
    bool coloured;
  };
  const std::vector<Case> cases = {
      {{"-c", "-O2", "-Wall", "w.c", "-lm"},
       {{"TERM", "xterm"}, {"COLUMNS", "40"}},
       true},
      {{"-x", "c++", "-c", "-O2", "-Wall", "w.cc"}, {{"TERM", "xterm"}}, true},
      {{"-c", "-O2", "-Wall", "-fno-color-diagnostics", "w.c"},
       {{"TERM", "xterm"}, {"COLUMNS", "30"}},
       false},
      {{"-c", "-O2", "-Wall", "-fmessage-length=25", "w.c"},
       {{"TERM", "dumb"}, {"COLUMNS", "60"}},
       false},
      // 0: do not wrap (the cc1 job gets none: not the terminal's width).
      {{"-c", "-O2", "-Wall", "-fmessage-length=0", "w.c"},
       {{"TERM", "xterm"}, {"COLUMNS", "30"}},
       true},
  };
  for (const Case& c : cases) {
    std::string line;
    for (const std::string& arg : c.args) line += " " + arg;
    SCOPED_TRACE("clang-16" + line);
    const Side theirs = on_terminal(clang_, "clang-16", c.args, c.env);
    std::vector<std::string> ours_args = {"--phaseloop-policy=baseline"};
    ours_args.insert(ours_args.end(), c.args.begin(), c.args.end());
    const Side ours =
        on_terminal(wrapper_, AbsolutePath(kWrapper), ours_args, c.env);
    EXPECT_EQ(ours.exit_code, theirs.exit_code);
    EXPECT_EQ(ours.output, theirs.output);
    EXPECT_EQ(theirs.output.find("\x1b[") != std::string::npos, c.coloured)
        << theirs.output;
  }
  // Each compiled in process, none handed to clang.
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"", "", "", "", ""}));
}

// -no-canonical-prefixes (the Bazel toolchain passes it): clang names
// itself as found on PATH (/usr/bin/clang-16, a link), so its headers are
// under /usr/lib/clang/16 in the .d file and the debug info, and its
// driver's diagnostics begin "clang-16:".
TEST_F(ClangAgreementTest, NoCanonicalPrefixesNamesClangAsFound) {
  const std::map<std::string, std::string> source = {
      {"a.c", "#include <stddef.h>\nsize_t f(void) { return sizeof(int); }\n"}};
  ExpectAgreement({"-no-canonical-prefixes", "-O2", "-c", "-MD", "a.c"}, {},
                  source);
  ExpectAgreement({"-no-canonical-prefixes", "-O2", "-c", "a.c", "-lm"}, {},
                  source);
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"", ""}));
}

// The code generator is set up with the command line's CPU, as clang's:
// not the first function's own target("arch=...") (module-level asm's
// alignment padding is assembled with the CPU's longest NOPs).
TEST_F(ClangAgreementTest, TheCommandLinesCpuGeneratesTheCode) {
  ExpectAgreement(
      {"-c", "-O2", "ma.c"}, {},
      {{"ma.c",
        "__attribute__((target(\"arch=znver3\"))) int first(int x) {\n"
        "  return x * 3;\n}\nint second(int x) { return x + 1; }\n"
        "__asm__(\".text\\n.p2align 4\\nmarker: nop\\n.p2align 5\\n"
        "marker2: ret\\n\");\n"}});
  EXPECT_EQ(Reasons(), std::vector<std::string>{""});
}

// CCC_OVERRIDE_OPTIONS edits clang's command line inside its driver.
TEST_F(ClangAgreementTest, DriverOverridesAreLeftToClang) {
  fs::copy_file(AbsolutePath("compiler_driver/fixtures/structs.c"),
                wrapper_.dir() + "/structs.c");
  std::string output;
  EXPECT_EQ(
      wrapper_.Run({AbsolutePath(kWrapper), "--phaseloop-policy=baseline", "-c",
                    "-O2", "structs.c"},
                   {{"CCC_OVERRIDE_OPTIONS", "+-DFROM_OVERRIDE=1"}}, &output),
      0)
      << output;
  EXPECT_NE(output.find("### Adding argument -DFROM_OVERRIDE=1"),
            std::string::npos)
      << output;
  EXPECT_EQ(Reasons(), std::vector<std::string>{"driver_override"});
}

// optnone functions (the attribute, #pragma clang optimize off) are left
// as written by clang's pipeline: the wrapper's pass runner optimised them
// (an overflow probe read 0 where clang's object says 1), baseline too.
TEST_F(ClangAgreementTest, OptnoneFunctionsAreNotOptimised) {
  const std::string source =
      "#include <limits.h>\n"
      "__attribute__((optnone, noinline)) int overflows(int x) {\n"
      "  return x + 1 < x;\n}\n"
      "#pragma clang optimize off\n"
      "long depth(long n) { return n == 0 ? 0 : 1 + depth(n - 1); }\n"
      "#pragma clang optimize on\n"
      "int probe(void) { return overflows(INT_MAX) + (int)depth(3); }\n";
  for (const char* level : {"-O2", "-Oz"}) {
    ExpectAgreement({"-c", level, "on.c"}, {}, {{"on.c", source}});
  }
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"", ""}));
}

// An input that can be read once (/dev/stdin, a pipe, a FIFO): the
// optimiser read it to its end, then a fallback to clang read an empty
// stream and passed broken code with an empty object. Left to clang.
TEST_F(ClangAgreementTest, InputsThatAreNotRegularFilesAreLeftToClang) {
  const std::string dir = wrapper_.dir();
  std::ofstream(dir + "/bad.c") << "int f(void) { return syntax error here }\n";
  std::string output;
  EXPECT_NE(wrapper_.Run({"sh", "-c",
                          "cat bad.c | " + AbsolutePath(kWrapper) +
                              " --phaseloop-policy=baseline -O2 -x c -c "
                              "/dev/stdin -o s.o"},
                         {}, &output),
            0)
      << output;
  EXPECT_NE(output.find("error:"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(dir + "/s.o"));
  // Not only a source: a header given with -include (a broken one passed,
  // a macro from a good one was lost), and a response file.
  std::ofstream(dir + "/ok.c") << "int f(void) { return VALUE; }\n";
  EXPECT_NE(wrapper_.Run({"sh", "-c",
                          "cat bad.c | " + AbsolutePath(kWrapper) +
                              " --phaseloop-policy=baseline -O2 -include "
                              "/dev/stdin -c ok.c -o i.o"},
                         {}, &output),
            0)
      << output;
  EXPECT_FALSE(fs::exists(dir + "/i.o"));
  EXPECT_NE(wrapper_.Run({"sh", "-c",
                          "cat bad.c | " + AbsolutePath(kWrapper) +
                              " --phaseloop-policy=baseline -O2 "
                              "-include/dev/stdin -c ok.c -o j.o"},
                         {}, &output),
            0)
      << output;
  EXPECT_FALSE(fs::exists(dir + "/j.o"));
  EXPECT_EQ(wrapper_.Run({"sh", "-c",
                          "echo '-O2 -DVALUE=3 -c ok.c -o r.o' | " +
                              AbsolutePath(kWrapper) + " @/dev/stdin"},
                         {}, &output),
            0)
      << output;
  EXPECT_TRUE(fs::exists(dir + "/r.o"));
  EXPECT_EQ(Reasons(),
            (std::vector<std::string>{"special_input", "special_input",
                                      "special_input", "special_input"}));
}

// The null device is empty however often it is read: arguments naming it
// (a define's value, an empty -include, a source) are the wrapper's to
// compile, in agreement with clang.
TEST_F(ClangAgreementTest, TheNullDeviceIsNoOneShotInput) {
  const std::map<std::string, std::string> source = {
      {"n.c", "int f(void) { return 2; }\n"}};
  ExpectAgreement({"-c", "-O2", "-DX=/dev/null", "n.c"}, {}, source);
  ExpectAgreement({"-c", "-O2", "-include", "/dev/null", "n.c", "-o", "i.o"},
                  {}, source);
  ExpectAgreement({"-c", "-O2", "-x", "c", "/dev/null", "-o", "empty.o"}, {},
                  source);
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"", "", ""}));
}

// --phaseloop-policy inside a response file: the policy is the one named
// there, and a fallback to clang gets the expanded arguments without it
// (it got the @file, and clang refused the flag: the build broke on any
// fallback, under the kill switch or with a bad config).
TEST_F(ClangAgreementTest, APolicyFlagInAResponseFileIsTheWrappers) {
  const std::string dir = wrapper_.dir();
  std::ofstream(dir + "/big.c")
      << "void ext(char *);\nint f(void) { char b[400]; ext(b); return 1; }\n";
  std::ofstream(dir + "/small.c") << "int g(int x) { return x * 3; }\n";
  std::ofstream(dir + "/flags.rsp")
      << "--phaseloop-policy=fixed:default<O1> -O2 -Wframe-larger-than=100\n";
  std::string output;
  // LLVM warns of the frame while the wrapper compiles: it falls back.
  EXPECT_EQ(wrapper_.Run({AbsolutePath(kWrapper), "@flags.rsp", "-c", "big.c"},
                         {}, &output),
            0)
      << output;
  EXPECT_NE(output.find("-Wframe-larger-than"), std::string::npos) << output;
  EXPECT_TRUE(fs::exists(dir + "/big.o"));
  EXPECT_EQ(
      wrapper_.Run({AbsolutePath(kWrapper), "@flags.rsp", "-c", "small.c"},
                   {{"PHASELOOP_DISABLE", "1"}}, &output),
      0)
      << output;
  EXPECT_EQ(
      wrapper_.Run({AbsolutePath(kWrapper), "@flags.rsp", "-c", "small.c"}, {},
                   &output),
      0)
      << output;
  std::vector<v1::Decision> d = wrapper_.Decisions();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].reason(), "backend_diagnostics") << d[0].detail();
  EXPECT_EQ(d[1].outcome(), v1::DISABLED);
  EXPECT_EQ(d[2].pipeline(), "default<O1>") << d[2].detail();
}

// The expanded arguments can be too long for a command line where clang
// reading the response file was not (an argument over 128 KiB: exec fails
// with E2BIG, and the fallback broke the build). They reach clang as a
// response file again, quoted so that it reads them back unchanged.
TEST_F(ClangAgreementTest, AFallbackTooLongForACommandLineStillCompiles) {
  const std::string dir = wrapper_.dir();
  std::ofstream(dir + "/long.c")
      << "#include <string.h>\n"
         "unsigned long n(void) { return strlen(BIG) + sizeof(ODD); }\n";
  std::ofstream(dir + "/long.rsp")
      << R"(--phaseloop-policy=baseline -O2 -DBIG=\")"
      << std::string(200000, 'x') << R"(\" -DODD=\"a\ b\\\\c\'\" -c long.c)";
  std::string output;
  EXPECT_EQ(wrapper_.Run({AbsolutePath(kWrapper), "@long.rsp"},
                         {{"PHASELOOP_DISABLE", "1"}}, &output),
            0)
      << output;
  EXPECT_EQ(output, "");
  ASSERT_TRUE(fs::exists(dir + "/long.o"));
  // clang read the same arguments: the same object as clang's own.
  std::ofstream(dir + "/clang.rsp")
      << R"(-O2 -DBIG=\")" << std::string(200000, 'x')
      << R"(\" -DODD=\"a\ b\\\\c\'\" -c long.c -o clang.o)";
  ASSERT_EQ(wrapper_.Run({"clang-16", "@clang.rsp"}, {}, &output), 0) << output;
  EXPECT_EQ(phaseloop::testing::ReadFileOrEmpty(dir + "/long.o"),
            phaseloop::testing::ReadFileOrEmpty(dir + "/clang.o"));

  // A first argument beginning with a byte order mark: clang strips one
  // from the start of a response file.
  const std::string bom =
      "\xef\xbb\xbf"
      "bom.c";
  std::ofstream(dir + "/" + bom) << "int bom(void) { return BIG[0]; }\n";
  std::ofstream(dir + "/bom.rsp")
      << "--phaseloop-policy=baseline " << bom << R"( -DBIG=\")"
      << std::string(200000, 'x') << R"(\" -c -o bom.o)";
  EXPECT_EQ(wrapper_.Run({AbsolutePath(kWrapper), "@bom.rsp"},
                         {{"PHASELOOP_DISABLE", "1"}}, &output),
            0)
      << output;
  EXPECT_TRUE(fs::exists(dir + "/bom.o"));
}

// A clang configuration file (here clang.cfg beside the clang the wrapper
// runs) adds options the wrapper never classified: it took the frontend's
// half and dropped the rest. Left to clang, which reads it whole.
TEST_F(ClangAgreementTest, AClangConfigFileIsLeftToClang) {
  const std::string dir = wrapper_.dir();
  fs::create_directories(dir + "/cfg/bin");
  fs::create_symlink("/usr/lib/llvm-16/bin/clang", dir + "/cfg/bin/clang-16");
  std::ofstream(dir + "/cfg/bin/clang.cfg") << "-DFROM_CONFIG=1\n";
  std::ofstream(dir + "/cc.conf") << "clang = " << dir << "/cfg/bin/clang-16\n";
  std::ofstream(dir + "/c.c")
      << "#ifndef FROM_CONFIG\n#error no config\n#endif\nint x;\n";
  std::string output;
  EXPECT_EQ(wrapper_.Run({AbsolutePath(kWrapper), "--phaseloop-policy=baseline",
                          "-no-canonical-prefixes", "-O2", "-c", "c.c"},
                         {{"PHASELOOP_CONFIG", dir + "/cc.conf"}}, &output),
            0)
      << output;
  EXPECT_TRUE(fs::exists(dir + "/c.o"));
  EXPECT_EQ(Reasons(), std::vector<std::string>{"config_file"});
}

// The variables clang's driver program reads to log what it does: clang
// itself compiles, so the log is what clang writes.
TEST_F(ClangAgreementTest, DriverLogVariablesAreLeftToClang) {
  const std::string dir = wrapper_.dir();
  std::ofstream(dir + "/h.c") << "#include <stddef.h>\nsize_t n;\n";
  std::string output;
  EXPECT_EQ(wrapper_.Run({AbsolutePath(kWrapper), "--phaseloop-policy=baseline",
                          "-c", "-O2", "h.c"},
                         {{"CC_PRINT_HEADERS", "1"}}, &output),
            0)
      << output;
  EXPECT_NE(output.find("stddef.h"), std::string::npos) << output;
  // Set but empty is set, as clang reads it.
  EXPECT_EQ(wrapper_.Run({AbsolutePath(kWrapper), "--phaseloop-policy=baseline",
                          "-c", "-O2", "h.c"},
                         {{"CC_PRINT_HEADERS", ""}}, &output),
            0)
      << output;
  EXPECT_NE(output.find("stddef.h"), std::string::npos) << output;
  EXPECT_EQ(Reasons(),
            (std::vector<std::string>{"driver_override", "driver_override"}));
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
