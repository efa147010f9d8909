#include "compiler_driver/cc_wrapper/argument_processing.h"

#include <set>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"

namespace phaseloop::cc_wrapper {
namespace {

using Args = std::vector<std::string>;
using R = PassThroughReason;

ProcessedArgs Process(const Args& args) {
  return ProcessArguments(args, args, DriverKind::kC);
}

// The compilation `args` give; fails the test on a pass-through.
Compilation Compiled(const Args& args) {
  ProcessedArgs processed = Process(args);
  if (const auto* pass = std::get_if<PassThrough>(&processed.result)) {
    ADD_FAILURE() << "pass-through " << PassThroughReasonName(pass->reason)
                  << " (" << pass->detail << ")";
    return Compilation();
  }
  return std::get<Compilation>(processed.result);
}

// The pass-through `args` give; fails the test on a compilation.
PassThrough Passed(const Args& args) {
  ProcessedArgs processed = Process(args);
  if (std::holds_alternative<Compilation>(processed.result)) {
    ADD_FAILURE() << "expected a pass-through";
    return PassThrough{R::kBadResponseFile, "<compiled>"};
  }
  return std::get<PassThrough>(processed.result);
}

// What MakeJob appends after the user's arguments.
Args WithFrontendTail(Args args) {
  for (const char* extra : {"-emit-llvm", "-Xclang", "-disable-llvm-passes",
                            "-o", kBitcodePlaceholder}) {
    args.push_back(extra);
  }
  return args;
}

// The arguments after the bitcode placeholder (the dependency-file ones),
// the dependency-file placeholder replaced by the job's dependency_file (as
// the runner's rename makes it).
Args DependencyTail(const CompileJob& job) {
  const Args& a = job.frontend_args;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != kBitcodePlaceholder) continue;
    Args tail(a.begin() + i + 1, a.end());
    for (std::string& arg : tail) {
      if (arg == kDependencyPlaceholder) arg = job.dependency_file;
    }
    return tail;
  }
  ADD_FAILURE() << "no placeholder";
  return {};
}

#define EXPECT_PASS_THROUGH(args, reason_, detail_)                  \
  do {                                                               \
    const PassThrough p = Passed(args);                              \
    EXPECT_EQ(p.reason, reason_) << PassThroughReasonName(p.reason); \
    EXPECT_EQ(p.detail, detail_);                                    \
  } while (0)

TEST(ArgumentProcessingTest, PlainCompile) {
  const Args args = {"-c", "-O2", "a.c", "-o", "a.o"};
  const ProcessedArgs processed = Process(args);
  EXPECT_EQ(processed.clang_args, args);
  EXPECT_EQ(processed.phaseloop.policy, "");
  const Compilation c = Compiled(args);
  EXPECT_EQ(c.opt_level, "O2");
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].source, "a.c");
  EXPECT_EQ(c.jobs[0].object_path, "a.o");
  EXPECT_EQ(c.jobs[0].frontend_args, WithFrontendTail({"-c", "-O2", "a.c"}));
}

TEST(ArgumentProcessingTest, SeveralSourcesGiveOneJobEach) {
  const Compilation c =
      Compiled({"-Wall", "-c", "src/a.c", "-O3", "lib/b.cc", "-DX=1", "c.cpp"});
  ASSERT_EQ(c.jobs.size(), 3u);
  EXPECT_EQ(c.jobs[0].object_path, "a.o");
  EXPECT_EQ(c.jobs[0].frontend_args,
            WithFrontendTail({"-Wall", "-c", "src/a.c", "-O3", "-DX=1"}));
  EXPECT_EQ(c.jobs[1].source, "lib/b.cc");
  EXPECT_EQ(c.jobs[1].object_path, "b.o");
  EXPECT_EQ(c.jobs[1].frontend_args,
            WithFrontendTail({"-Wall", "-c", "-O3", "lib/b.cc", "-DX=1"}));
  EXPECT_EQ(c.jobs[2].object_path, "c.o");
}

TEST(ArgumentProcessingTest, SourceExtensions) {
  for (const char* source : {"a.c", "a.i", "a.cc", "a.cpp", "a.cxx", "a.c++",
                             "a.C", "a.cp", "a.ii", "a.CPP", "dir.x/a.c"}) {
    EXPECT_EQ(Compiled({"-c", "-O2", source}).jobs.size(), 1u) << source;
  }
  for (const char* input : {"a.s", "a.S", "a.o", "a.m", "a.mm", "a.cu", "a.h",
                            "a.bc", "a.ll", "liba.a", "noext", "a.c/x"}) {
    EXPECT_PASS_THROUGH((Args{"-c", "-O2", input}), R::kNonSourceInput, input);
  }
}

TEST(ArgumentProcessingTest, LanguageOptionAppliesToFollowingInputs) {
  const Compilation c = Compiled({"-c", "-O2", "-x", "c++", "a.c"});
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].frontend_args,
            WithFrontendTail({"-c", "-O2", "-x", "c++", "a.c"}));
  EXPECT_EQ(Compiled({"-c", "-O2", "-xc", "kernel.s"}).jobs.size(), 1u);
}

// Found by argv_fuzzer: "" is an input clang cannot open, not a source.
TEST(ArgumentProcessingTest, AnEmptyArgumentIsNotASource) {
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-x", "c", ""}), R::kNonSourceInput,
                      "(an empty argument)");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "a.c", ""}), R::kNonSourceInput,
                      "(an empty argument)");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "a.c", "-o", ""}), R::kMissingArgument,
                      "-o ''");
}

TEST(ArgumentProcessingTest, LanguageOptionPositionMatters) {
  // -x after the input does not apply to it.
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "a.s", "-x", "c"}), R::kNonSourceInput,
                      "a.s");
  EXPECT_PASS_THROUGH(
      (Args{"-c", "-O2", "-x", "c++", "a.cc", "-x", "none", "b.s"}),
      R::kNonSourceInput, "b.s");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-x", "assembler", "a.c"}),
                      R::kNonSourceInput, "a.c");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-x", "objective-c", "a.c"}),
                      R::kNonSourceInput, "a.c");
}

TEST(ArgumentProcessingTest, OptionArgumentsAreNotInputs) {
  const Compilation c = Compiled({"-c", "-O2", "-include", "pre.h", "-MD",
                                  "-MF", "odd.c", "-isystem", "sys", "a.c"});
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].source, "a.c");
}

TEST(ArgumentProcessingTest, JoinedOutput) {
  const Compilation c = Compiled({"-c", "-O2", "a.c", "-oout/b.o"});
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].object_path, "out/b.o");
  EXPECT_EQ(c.jobs[0].frontend_args, WithFrontendTail({"-c", "-O2", "a.c"}));
}

TEST(ArgumentProcessingTest, LastOutputWins) {
  const Compilation c = Compiled({"-c", "-O2", "-o", "x.o", "a.c", "-oy.o"});
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].object_path, "y.o");
  EXPECT_EQ(c.jobs[0].frontend_args, WithFrontendTail({"-c", "-O2", "a.c"}));
}

TEST(ArgumentProcessingTest, OptLevels) {
  struct Case {
    const char* flag;
    const char* level;
  };
  for (const Case& c :
       {Case{"-O", "O1"}, Case{"-O1", "O1"}, Case{"-O2", "O2"},
        Case{"-O3", "O3"}, Case{"-O4", "O3"}, Case{"-O02", "O2"},
        Case{"-Os", "Os"}, Case{"-Oz", "Oz"}, Case{"-Og", "O1"}}) {
    EXPECT_EQ(Compiled({"-c", c.flag, "a.c"}).opt_level, c.level) << c.flag;
  }
  EXPECT_EQ(Compiled({"-c", "-O0", "-O3", "a.c", "-Os"}).opt_level, "Os");
  // clang's frontend warns of -O5 and above in its own way.
  EXPECT_PASS_THROUGH((Args{"-c", "-O9", "a.c"}), R::kUnknownOption, "-O9");
  EXPECT_PASS_THROUGH((Args{"-c", "-O12", "a.c"}), R::kUnknownOption, "-O12");
  EXPECT_PASS_THROUGH((Args{"-c", "-O04", "a.c"}), R::kUnknownOption, "-O04");
}

// A pass-through names the one source its command compiles, for its
// record: which unit went to clang (a build system's probe or the
// program's own file).
TEST(ArgumentProcessingTest, APassThroughNamesItsOneSource) {
  EXPECT_EQ(Passed({"-c", "-O2", "-v", "src/hot.c"}).source, "src/hot.c");
  EXPECT_EQ(Passed({"-O2", "-o", "prog", "prog.c"}).source, "prog.c");
  EXPECT_EQ(Passed({"-o", "prog", "a.o", "b.o"}).source, "");
  EXPECT_EQ(Passed({"-c", "-O2", "-o", "x.o", "a.c", "b.c"}).source, "");
  // stdin is a unit too: two units, no one source.
  EXPECT_EQ(Passed({"-c", "-O2", "-x", "c", "-", "hot.c"}).source, "");
  EXPECT_EQ(Passed({"--phaseloop-nope", "-c", "-O2", "hot.c"}).source, "hot.c");
}

// A command with no input at all is a question to the compiler (what a
// configure script asks), told from a link by its detail.
TEST(ArgumentProcessingTest, ACommandWithNoInputIsAQuery) {
  for (const Args& query :
       {Args{"--version"}, Args{"-v"}, Args{"-dumpmachine"}}) {
    EXPECT_EQ(Passed(query).detail, kNoInputDetail) << query[0];
  }
  EXPECT_EQ(Passed({"-o", "prog", "a.o"}).detail, "");
  EXPECT_EQ(Passed({"-o", "prog", "a.c"}).detail, "");
  EXPECT_EQ(Passed({"-v", "-"}).detail, "");
}

// Only Linux (GNU) targets: the backend is set up as clang sets it up there.
TEST(ArgumentProcessingTest, OtherSystemsThanLinuxGoToClang) {
  EXPECT_EQ(
      Compiled({"-c", "-O2", "--target=x86_64-pc-linux-gnu", "a.c"}).opt_level,
      "O2");
  EXPECT_EQ(
      Compiled({"-c", "-O2", "-target", "i386-linux-gnu", "a.c"}).opt_level,
      "O2");
  EXPECT_PASS_THROUGH(
      (Args{"-c", "-O2", "--target=x86_64-apple-macos11", "a.c"}), R::kTooHard,
      "--target=x86_64-apple-macos11");
  EXPECT_PASS_THROUGH(
      (Args{"-c", "-O2", "-target", "x86_64-unknown-netbsd", "a.c"}),
      R::kTooHard, "-target x86_64-unknown-netbsd");
  EXPECT_PASS_THROUGH(
      (Args{"-c", "-O2", "--target=x86_64-linux-android", "a.c"}), R::kTooHard,
      "--target=x86_64-linux-android");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-g", "-gdwarf-aranges", "a.c"}),
                      R::kTooHard, "-gdwarf-aranges");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-fdiagnostics-format=sarif", "a.c"}),
                      R::kTooHard, "-fdiagnostics-format=sarif");
}

TEST(ArgumentProcessingTest, CodegenFlags) {
  const CodegenFlags defaults = Compiled({"-c", "-O2", "a.c"}).codegen;
  EXPECT_FALSE(defaults.function_sections);
  EXPECT_FALSE(defaults.data_sections);
  EXPECT_TRUE(defaults.unique_section_names);
  EXPECT_TRUE(defaults.addrsig);
  EXPECT_FALSE(defaults.split_machine_functions);

  const CodegenFlags set =
      Compiled({"-c", "-O2", "-ffunction-sections", "-fdata-sections",
                "-fno-unique-section-names", "-fno-addrsig",
                "-fsplit-machine-functions", "a.c"})
          .codegen;
  EXPECT_TRUE(set.function_sections);
  EXPECT_TRUE(set.data_sections);
  EXPECT_FALSE(set.unique_section_names);
  EXPECT_FALSE(set.addrsig);
  EXPECT_TRUE(set.split_machine_functions);

  const CodegenFlags last =
      Compiled({"-c", "-O2", "-ffunction-sections", "-fno-function-sections",
                "-fno-data-sections", "-fdata-sections",
                "-fno-unique-section-names", "-funique-section-names",
                "-fno-addrsig", "-faddrsig", "-fsplit-machine-functions",
                "-fno-split-machine-functions", "a.c"})
          .codegen;
  EXPECT_FALSE(last.function_sections);
  EXPECT_TRUE(last.data_sections);
  EXPECT_TRUE(last.unique_section_names);
  EXPECT_TRUE(last.addrsig);
  EXPECT_FALSE(last.split_machine_functions);
}

TEST(ArgumentProcessingTest, LinkerFlagsWithCompileOnlyAreFine) {
  const Compilation c =
      Compiled({"-c", "-O2", "a.c", "-Wl,--as-needed,-z,now", "-lm", "-L/x",
                "-Xlinker", "--gc-sections", "-shared", "-fuse-ld=lld"});
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].frontend_args,
            WithFrontendTail({"-c", "-O2", "a.c", "-Wl,--as-needed,-z,now",
                              "-lm", "-L/x", "-Xlinker", "--gc-sections",
                              "-shared", "-fuse-ld=lld"}));
}

TEST(ArgumentProcessingTest, EveryPassThroughReason) {
  EXPECT_PASS_THROUGH((Args{"-O2", "a.c", "-o", "a"}), R::kNotCompileOnly, "");
  EXPECT_PASS_THROUGH((Args{"--version"}), R::kNotCompileOnly, kNoInputDetail);
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-E", "a.c"}), R::kPreprocessOnly,
                      "-E");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-S", "a.c"}), R::kAssemblyOutput,
                      "-S");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-emit-llvm", "a.c"}), R::kEmitLlvm,
                      "-emit-llvm");
  EXPECT_PASS_THROUGH((Args{"-M", "-O2", "a.c"}), R::kDependenciesOnly, "");
  EXPECT_PASS_THROUGH((Args{"-c", "-MM", "-O2", "a.c"}), R::kDependenciesOnly,
                      "");
  EXPECT_PASS_THROUGH((Args{"-fsyntax-only", "a.c"}), R::kSyntaxOnly,
                      "-fsyntax-only");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-flto=bogus", "a.c"}), R::kLto,
                      "-flto=bogus");
  EXPECT_PASS_THROUGH(
      (Args{"-c", "-O2", "-arch", "x86_64", "-arch", "arm64", "a.c"}),
      R::kMultipleArch, "");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-fsanitize=address", "a.c"}),
                      R::kTooHard, "-fsanitize=address");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-fmystery", "a.c"}),
                      R::kUnknownOption, "-fmystery");
  EXPECT_PASS_THROUGH((Args{"-c", "a.c"}), R::kOptimizationDisabled, "");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2"}), R::kNoSourceInput, "");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "a.c", "start.S"}), R::kNonSourceInput,
                      "start.S");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-x", "c", "-"}), R::kStdinOrStdout,
                      "-");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "a.c", "-o", "-"}), R::kStdinOrStdout,
                      "-");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "a.c", "b.c", "-o", "x.o"}),
                      R::kMultipleOutputs, "x.o");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "a.c", "-o"}), R::kMissingArgument,
                      "-o");
}

TEST(ArgumentProcessingTest, ModeBeatsOtherReasons) {
  // A link with a too-hard option counts as a link; -S with -c is -S.
  EXPECT_PASS_THROUGH((Args{"-O2", "-fsanitize=address", "a.c", "-o", "a"}),
                      R::kNotCompileOnly, "");
  EXPECT_PASS_THROUGH((Args{"-S", "-c", "-O2", "a.c"}), R::kAssemblyOutput,
                      "-S");
  EXPECT_PASS_THROUGH((Args{"-c", "-M", "-MD", "-O2", "a.c"}),
                      R::kDependenciesOnly, "");
}

TEST(ArgumentProcessingTest, TooHardOptions) {
  EXPECT_PASS_THROUGH((Args{"-c", "-Ofast", "a.c"}), R::kTooHard, "-Ofast");
  EXPECT_PASS_THROUGH(
      (Args{"-c", "-O2", "-mllvm", "-inline-threshold=1", "a.c"}), R::kTooHard,
      "-mllvm");
  // -Xclang consumes its argument: "-E" is not a mode here.
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-Xclang", "-E", "a.c"}), R::kTooHard,
                      "-Xclang");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-Wa,--noexecstack", "a.c"}),
                      R::kTooHard, "-Wa,--noexecstack");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-funroll-loops", "a.c"}), R::kTooHard,
                      "-funroll-loops");
  // The first too-hard option is named even after an unknown one.
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-fmystery", "-pg", "a.c"}),
                      R::kTooHard, "-pg");
}

TEST(ArgumentProcessingTest, UnknownOptions) {
  EXPECT_PASS_THROUGH((Args{"-c", "-Ox", "a.c"}), R::kUnknownOption, "-Ox");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "--", "a.c"}), R::kUnknownOption,
                      "--");
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "--phaseloop-frobnicate", "a.c"}),
                      R::kUnknownOption, "--phaseloop-frobnicate");
  // An unknown --phaseloop-* flag stays for clang to report.
  EXPECT_EQ(Process({"-c", "--phaseloop-x", "a.c"}).clang_args,
            (Args{"-c", "--phaseloop-x", "a.c"}));
}

TEST(ArgumentProcessingTest, LtoModes) {
  // clang-16's driver: -flto, =full, =auto and =jobserver are full LTO.
  for (const char* flag :
       {"-flto", "-flto=full", "-flto=auto", "-flto=jobserver"}) {
    EXPECT_EQ(Compiled({"-c", "-O2", flag, "a.c"}).lto, LtoMode::kFull) << flag;
  }
  EXPECT_EQ(Compiled({"-c", "-O2", "-flto=thin", "a.c"}).lto, LtoMode::kThin);
  EXPECT_EQ(Compiled({"-c", "-O2", "a.c"}).lto, LtoMode::kNone);
  // -flto-jobs=N is the link's: it neither starts nor stops LTO.
  EXPECT_EQ(Compiled({"-c", "-O2", "-flto-jobs=4", "a.c"}).lto, LtoMode::kNone);
  EXPECT_EQ(Compiled({"-c", "-O2", "-flto=thin", "-flto-jobs=4", "a.c"}).lto,
            LtoMode::kThin);
}

TEST(ArgumentProcessingTest, LtoLastWins) {
  EXPECT_EQ(Compiled({"-c", "-O2", "-flto", "-fno-lto", "a.c"}).lto,
            LtoMode::kNone);
  EXPECT_EQ(Compiled({"-c", "-O2", "-fno-lto", "-flto=full", "a.c"}).lto,
            LtoMode::kFull);
  EXPECT_EQ(Compiled({"-c", "-O2", "-flto=thin", "-flto", "a.c"}).lto,
            LtoMode::kFull);
  // A later valid -flto replaces a value clang would reject, as in clang.
  EXPECT_EQ(Compiled({"-c", "-O2", "-flto=bogus", "-flto=thin", "a.c"}).lto,
            LtoMode::kThin);
  EXPECT_PASS_THROUGH((Args{"-c", "-O2", "-flto", "-flto=bogus", "a.c"}),
                      R::kLto, "-flto=bogus");
}

TEST(ArgumentProcessingTest, OneArchIsFine) {
  EXPECT_EQ(Compiled({"-c", "-O2", "-arch", "x86_64", "a.c"}).jobs.size(), 1u);
}

TEST(ArgumentProcessingTest, PolicyFlagBothSpellings) {
  const ProcessedArgs joined =
      Process({"--phaseloop-policy=greedy:3", "-c", "-O2", "a.c"});
  EXPECT_EQ(joined.phaseloop.policy, "greedy:3");
  EXPECT_EQ(joined.clang_args, (Args{"-c", "-O2", "a.c"}));
  ASSERT_TRUE(std::holds_alternative<Compilation>(joined.result));
  EXPECT_EQ(std::get<Compilation>(joined.result).jobs[0].frontend_args,
            WithFrontendTail({"-c", "-O2", "a.c"}));

  const ProcessedArgs separate =
      Process({"-c", "--phaseloop-policy", "model.tflite", "-O2", "a.c"});
  EXPECT_EQ(separate.phaseloop.policy, "model.tflite");
  EXPECT_EQ(separate.clang_args, (Args{"-c", "-O2", "a.c"}));
  ASSERT_TRUE(std::holds_alternative<Compilation>(separate.result));

  // Stripped on pass-through too; the last one wins.
  const ProcessedArgs link = Process(
      {"--phaseloop-policy=a", "a.c", "-o", "a", "--phaseloop-policy", "b"});
  EXPECT_EQ(link.phaseloop.policy, "b");
  EXPECT_EQ(link.clang_args, (Args{"a.c", "-o", "a"}));
}

TEST(ArgumentProcessingTest, PolicyFlagWithoutValue) {
  const ProcessedArgs processed =
      Process({"-c", "-O2", "a.c", "--phaseloop-policy"});
  EXPECT_EQ(processed.clang_args, (Args{"-c", "-O2", "a.c"}));
  ASSERT_TRUE(std::holds_alternative<PassThrough>(processed.result));
  EXPECT_EQ(std::get<PassThrough>(processed.result).reason,
            R::kMissingArgument);
}

TEST(ArgumentProcessingTest, PolicyFlagInsideResponseFile) {
  const Args original = {"-c", "@flags.rsp", "a.c"};
  const Args expanded = {"-c", "-O2", "--phaseloop-policy=p", "a.c"};
  const ProcessedArgs processed =
      ProcessArguments(original, expanded, DriverKind::kCxx);
  EXPECT_EQ(processed.phaseloop.policy, "p");
  // The flag cannot be removed from the file, so clang gets the expansion.
  EXPECT_EQ(processed.clang_args, (Args{"-c", "-O2", "a.c"}));

  const ProcessedArgs outside = ProcessArguments(
      {"--phaseloop-policy=q", "@flags.rsp"},
      {"--phaseloop-policy=q", "-c", "-O2", "a.c"}, DriverKind::kC);
  EXPECT_EQ(outside.phaseloop.policy, "q");
  EXPECT_EQ(outside.clang_args, Args{"@flags.rsp"});
  ASSERT_TRUE(std::holds_alternative<Compilation>(outside.result));
  EXPECT_EQ(std::get<Compilation>(outside.result).jobs[0].frontend_args,
            WithFrontendTail({"-c", "-O2", "a.c"}));
}

TEST(ArgumentProcessingTest, DependencyFileWithOutput) {
  const Compilation c =
      Compiled({"-c", "-O2", "-MD", "src/a.c", "-o", "out/b.o"});
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(DependencyTail(c.jobs[0]),
            (Args{"-MF", "out/b.d", "-MQ", "out/b.o"}));
}

TEST(ArgumentProcessingTest, DependencyFileWithoutOutput) {
  const Compilation c = Compiled({"-c", "-O2", "-MMD", "src/a.c", "lib/b.cc"});
  ASSERT_EQ(c.jobs.size(), 2u);
  EXPECT_EQ(DependencyTail(c.jobs[0]), (Args{"-MF", "a.d", "-MQ", "a.o"}));
  EXPECT_EQ(DependencyTail(c.jobs[1]), (Args{"-MF", "b.d", "-MQ", "b.o"}));
}

TEST(ArgumentProcessingTest, DependencyFileNameReplacesTheLastExtension) {
  struct Case {
    const char* output;
    const char* dep_file;
  };
  for (const Case& c :
       {Case{"out/noext", "out/noext.d"}, Case{"out/.hidden", "out/.d"},
        Case{"dir.d/x", "dir.d/x.d"}, Case{"x.tar.o", "x.tar.d"}}) {
    const Compilation compiled =
        Compiled({"-c", "-O2", "-MD", "a.c", "-o", c.output});
    ASSERT_EQ(compiled.jobs.size(), 1u);
    EXPECT_EQ(DependencyTail(compiled.jobs[0]),
              (Args{"-MF", c.dep_file, "-MQ", c.output}));
  }
}

TEST(ArgumentProcessingTest, UserDependencyOptionsAreKept) {
  EXPECT_EQ(DependencyTail(
                Compiled({"-c", "-O2", "-MD", "-MF", "x.d", "a.c"}).jobs.at(0)),
            (Args{"-MF", "x.d", "-MQ", "a.o"}));
  EXPECT_EQ(DependencyTail(
                Compiled({"-c", "-O2", "-MMD", "-MFx.d", "a.c"}).jobs.at(0)),
            (Args{"-MF", "x.d", "-MQ", "a.o"}));
  // The last -MF is the file clang writes.
  EXPECT_EQ(Compiled({"-c", "-O2", "-MD", "-MF", "x.d", "-MFy.d", "a.c"})
                .jobs.at(0)
                .dependency_file,
            "y.d");
  EXPECT_EQ(DependencyTail(
                Compiled({"-c", "-O2", "-MD", "-MT", "t", "a.c", "-o", "o.o"})
                    .jobs.at(0)),
            (Args{"-MF", "o.d"}));
  EXPECT_EQ(
      DependencyTail(Compiled({"-c", "-O2", "-MD", "-MQt", "a.c"}).jobs.at(0)),
      (Args{"-MF", "a.d"}));
  EXPECT_EQ(DependencyTail(Compiled({"-c", "-O2", "-MD", "-MF", "x.d", "-MQ",
                                     "t", "-MT", "u", "-MP", "a.c"})
                               .jobs.at(0)),
            (Args{"-MF", "x.d"}));
  const Compilation c =
      Compiled({"-c", "-O2", "-MMD", "-MP", "-MF", "x.d", "-MT", "t", "a.c"});
  Args expected = WithFrontendTail(
      {"-c", "-O2", "-MMD", "-MP", "-MF", "x.d", "-MT", "t", "a.c"});
  expected.insert(expected.end(), {"-MF", kDependencyPlaceholder});
  EXPECT_EQ(c.jobs.at(0).frontend_args, expected);
  EXPECT_EQ(c.jobs.at(0).dependency_file, "x.d");
}

// The frontend never writes the user's dependency file itself: it writes
// the placeholder's temporary file, which the runner renames into place
// only once every object is (a fallback then leaves no .d clang would not
// write, e.g. when -o names a directory that does not exist).
TEST(ArgumentProcessingTest, DependencyFileGoesThroughThePlaceholder) {
  const Compilation c = Compiled(
      {"-c", "-O2", "-MD", "-MF", "deps.d", "-o", "nodir/out.o", "a.c"});
  const Args& a = c.jobs.at(0).frontend_args;
  ASSERT_GE(a.size(), 4u);
  EXPECT_EQ(Args(a.end() - 4, a.end()),
            (Args{"-MF", kDependencyPlaceholder, "-MQ", "nodir/out.o"}));
  EXPECT_EQ(c.jobs.at(0).dependency_file, "deps.d");
  EXPECT_EQ(Compiled({"-c", "-O2", "a.c"}).jobs.at(0).dependency_file, "");
}

TEST(ArgumentProcessingTest, NoDependencyOutputWithoutMdOrForPreprocessed) {
  EXPECT_EQ(DependencyTail(Compiled({"-c", "-O2", "a.c"}).jobs.at(0)), Args{});
  EXPECT_EQ(
      DependencyTail(Compiled({"-c", "-O2", "-MF", "x.d", "a.c"}).jobs.at(0)),
      Args{});
  // clang runs no preprocessor on .i/.ii, so writes no .d ...
  EXPECT_EQ(DependencyTail(Compiled({"-c", "-O2", "-MD", "a.i"}).jobs.at(0)),
            Args{});
  // ... unless -x makes it a source again.
  EXPECT_EQ(DependencyTail(
                Compiled({"-c", "-O2", "-MD", "-x", "c", "a.i"}).jobs.at(0)),
            (Args{"-MF", "a.d", "-MQ", "a.o"}));
}

TEST(ArgumentProcessingTest, ReasonNamesAreDistinctSnakeCase) {
  std::set<std::string> names;
  for (int r = 0; r <= static_cast<int>(R::kDriverOverride); ++r) {
    const std::string name =
        PassThroughReasonName(static_cast<PassThroughReason>(r));
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"),
              std::string::npos)
        << name;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_STREQ(PassThroughReasonName(R::kTooHard), "too_hard");
  EXPECT_STREQ(PassThroughReasonName(R::kBadResponseFile), "bad_response_file");
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
