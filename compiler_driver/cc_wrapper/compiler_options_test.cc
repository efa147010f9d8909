#include "compiler_driver/cc_wrapper/compiler_options.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace phaseloop::cc_wrapper {
namespace {

TEST(CompilerOptionsTest, TableIsSortedAndUnique) {
  const CompilerOption* previous = nullptr;
  for (const CompilerOption& option : AllOptions()) {
    if (previous != nullptr) {
      EXPECT_LT(previous->name, option.name) << "table out of order";
    }
    previous = &option;
  }
  EXPECT_GT(AllOptions().size(), 150u);
}

TEST(CompilerOptionsTest, EntriesAreWellFormed) {
  for (const CompilerOption& option : AllOptions()) {
    ASSERT_GE(option.name.size(), 2u) << option.name;
    EXPECT_EQ(option.name[0], '-') << option.name;
    if ((option.flags & kTakesPath) != 0) {
      EXPECT_NE(option.flags & (kTakesArg | kTakesConcatArg), 0u)
          << option.name << " takes a path but no argument";
    }
    // Every entry must resolve to itself.
    EXPECT_EQ(LookupOption(option.name).option, &option) << option.name;
  }
}

std::string Name(std::string_view arg) {
  const OptionMatch match = LookupOption(arg);
  return match.option == nullptr ? "<none>" : std::string(match.option->name);
}

bool TooHard(std::string_view arg) {
  const OptionMatch match = LookupOption(arg);
  return match.option != nullptr && (match.option->flags & kTooHard) != 0;
}

TEST(CompilerOptionsTest, ExactMatch) {
  const OptionMatch match = LookupOption("-c");
  ASSERT_NE(match.option, nullptr);
  EXPECT_EQ(match.option->name, "-c");
  EXPECT_FALSE(match.joined);
  EXPECT_EQ(match.value, "");

  const OptionMatch o = LookupOption("-o");
  ASSERT_NE(o.option, nullptr);
  EXPECT_NE(o.option->flags & kTakesArg, 0u);
  EXPECT_NE(o.option->flags & kTakesPath, 0u);
  EXPECT_FALSE(o.joined);
}

TEST(CompilerOptionsTest, JoinedValues) {
  struct Case {
    const char* arg;
    const char* name;
    const char* value;
  };
  for (const Case& c :
       {Case{"-Iinclude/dir", "-I", "include/dir"},
        Case{"-DNAME=value", "-D", "NAME=value"},
        Case{"-ofoo.o", "-o", "foo.o"}, Case{"-xc++", "-x", "c++"},
        Case{"-MFdeps/a.d", "-MF", "deps/a.d"},
        Case{"-MTtarget", "-MT", "target"},
        Case{"-std=c++17", "-std=", "c++17"}, Case{"-O2", "-O", "2"},
        Case{"-Os", "-O", "s"}, Case{"-Wall", "-W", "all"},
        Case{"-Werror=format", "-W", "error=format"},
        Case{"-Wl,-z,now", "-Wl,", "-z,now"}, Case{"-lm", "-l", "m"},
        Case{"-includeconfig.h", "-include", "config.h"},
        Case{"-flto=thin", "-flto", "=thin"},
        Case{"-mavx512f", "-mavx", "512f"},
        Case{"-march=native", "-march=", "native"},
        Case{"-fvisibility=hidden", "-fvisibility", "=hidden"},
        Case{"-fstack-protector-strong", "-fstack-protector", "-strong"}}) {
    const OptionMatch match = LookupOption(c.arg);
    ASSERT_NE(match.option, nullptr) << c.arg;
    EXPECT_EQ(match.option->name, c.name) << c.arg;
    EXPECT_TRUE(match.joined) << c.arg;
    EXPECT_EQ(match.value, c.value) << c.arg;
  }
}

TEST(CompilerOptionsTest, LongestPrefixWins) {
  EXPECT_EQ(Name("-Wl,--as-needed"), "-Wl,");
  EXPECT_EQ(Name("-Wa,--noexecstack"), "-Wa,");
  EXPECT_EQ(Name("-Wp,-MD,x.d"), "-Wp,");
  EXPECT_EQ(Name("-Wextra"), "-W");
  EXPECT_EQ(Name("-include-pch"), "-include-pch");
  EXPECT_EQ(Name("-stdlib=libc++"), "-stdlib=");
  EXPECT_EQ(Name("-unwindlib=libgcc"), "-unwindlib=");
  EXPECT_EQ(Name("-undef"), "-undef");
  EXPECT_EQ(Name("-Ofast"), "-Ofast");
  EXPECT_EQ(Name("-ffp-contract=fast-honor-pragmas"), "-ffp-contract=fast");
}

TEST(CompilerOptionsTest, SeparateOnlyOptionsDoNotMatchJoined) {
  // -Xclang and -mllvm take a separate argument only; -z too.
  EXPECT_EQ(Name("-Xclangfoo"), "<none>");
  EXPECT_EQ(Name("-mllvm-foo"), "<none>");
  EXPECT_EQ(Name("-znow"), "<none>");
}

TEST(CompilerOptionsTest, NotOptions) {
  EXPECT_EQ(Name("a.c"), "<none>");
  EXPECT_EQ(Name("-"), "<none>");
  EXPECT_EQ(Name(""), "<none>");
  EXPECT_EQ(Name("@rsp"), "<none>");
  EXPECT_EQ(Name("-fmystery-option"), "<none>");
  EXPECT_EQ(Name("--phaseloop-policy=x"), "<none>");
}

// A profile to use is read by clang's frontend (or, for an IR-level one,
// refused by the in-process frontend): not too hard for the table.
TEST(CompilerOptionsTest, ProfileUseTakesAPath) {
  for (const char* arg :
       {"-fprofile-instr-use=x.profdata", "-fprofile-use=x.profdata"}) {
    OptionMatch o = LookupOption(arg);
    ASSERT_NE(o.option, nullptr) << arg;
    EXPECT_TRUE(o.joined) << arg;
    EXPECT_EQ(o.value, "x.profdata") << arg;
    EXPECT_EQ(o.option->flags & kTooHard, 0u) << arg;
    EXPECT_NE(o.option->flags & kTakesPath, 0u) << arg;
  }
}

TEST(CompilerOptionsTest, TooHard) {
  for (const char* arg : {"-mllvm",
                          "-Xclang",
                          "-fsanitize=address",
                          "-fsanitize-recover=all",
                          "-fprofile-instr-generate",
                          "-fprofile-generate",
                          "-fprofile-remapping-file=x.map",
                          "-fcoverage-mapping",
                          "--coverage",
                          "-pg",
                          "-finstrument-functions",
                          "-fxray-instrument",
                          "-fembed-bitcode",
                          "-save-temps",
                          "-save-temps=obj",
                          "-fbasic-block-sections=all",
                          "-fno-integrated-as",
                          "-Wa,--noexecstack",
                          "-Xassembler",
                          "-gsplit-dwarf",
                          "-gz",
                          "-gz=zlib",
                          "-glldb",
                          "-gsce",
                          "-ffast-math",
                          "-Ofast",
                          "-ffp-contract=fast",
                          "-fpass-plugin=x.so",
                          "-fplugin=x.so",
                          "-MJ",
                          "-fopenmp",
                          "-fopenmp=libomp",
                          "-ftime-trace",
                          "-fmodules",
                          "-fmodule-map-file=m",
                          "-emit-ast",
                          "-fstack-usage",
                          "-mrelax-all",
                          "-fexperimental-new-constant-interpreter",
                          "-funroll-loops",
                          "-fno-unroll-loops",
                          "-fvectorize",
                          "-fno-vectorize",
                          "-fslp-vectorize",
                          "-v",
                          "-###",
                          "-Rpass=inline"}) {
    EXPECT_TRUE(TooHard(arg)) << arg;
  }
}

TEST(CompilerOptionsTest, Fine) {
  for (const char* arg : {"-Wall",
                          "-Werror=bar",
                          "-DX",
                          "-UX",
                          "-Iinc",
                          "-std=c11",
                          "-m64",
                          "-march=x86-64-v3",
                          "-mtune=generic",
                          "-mcpu=native",
                          "-fPIC",
                          "-fpic",
                          "-fPIE",
                          "-fpie",
                          "-fno-pic",
                          "-fno-pie",
                          "-fvisibility=hidden",
                          "-fvisibility-inlines-hidden",
                          "-fno-exceptions",
                          "-fexceptions",
                          "-fno-rtti",
                          "-frtti",
                          "-fno-strict-aliasing",
                          "-fwrapv",
                          "-fno-common",
                          "-fcommon",
                          "-fstack-protector",
                          "-fstack-protector-all",
                          "-fno-omit-frame-pointer",
                          "-fomit-frame-pointer",
                          "-fno-plt",
                          "-fdiagnostics-color=always",
                          "-fcolor-diagnostics",
                          "-fno-color-diagnostics",
                          "-fmessage-length=0",
                          "-fno-builtin",
                          "-fno-builtin-memcpy",
                          "-ffreestanding",
                          "-fsigned-char",
                          "-funsigned-char",
                          "-fno-asynchronous-unwind-tables",
                          "-funwind-tables",
                          "-fdebug-prefix-map=/a=/b",
                          "-ffile-prefix-map=/a=/b",
                          "-fmacro-prefix-map=/a=/b",
                          "-fno-inline",
                          "-fno-inline-functions",
                          "-ffunction-sections",
                          "-fdata-sections",
                          "-fno-unique-section-names",
                          "-faddrsig",
                          "-fno-addrsig",
                          "-fsplit-machine-functions",
                          "-fno-split-machine-functions",
                          "-fstack-clash-protection",
                          "-fcf-protection=full",
                          "-fno-semantic-interposition",
                          "-fno-math-errno",
                          "-pthread",
                          "-pipe",
                          "-w",
                          "-g",
                          "-g0",
                          "-g3",
                          "-ggdb",
                          "-ggdb3",
                          "-gdwarf-4",
                          "-gdwarf-5",
                          "-gline-tables-only",
                          "-gcolumn-info",
                          "-gno-column-info",
                          "-nostdinc",
                          "-nostdinc++",
                          "-isysroot",
                          "--sysroot=/s",
                          "-idirafter",
                          "-iquote",
                          "-include",
                          "-imacros",
                          "-MD",
                          "-MMD",
                          "-MF",
                          "-MT",
                          "-MQ",
                          "-MP",
                          "-MG",
                          "-M",
                          "-MM",
                          "-c",
                          "-S",
                          "-E",
                          "-o",
                          "-x",
                          "-O",
                          "-O2",
                          "-Os",
                          "-ansi",
                          "-pedantic",
                          "-pedantic-errors",
                          "-Qunused-arguments",
                          "-no-canonical-prefixes",
                          "-fno-canonical-system-headers",
                          "-lm",
                          "-L/usr/lib",
                          "-Wl,--gc-sections",
                          "-shared",
                          "-static",
                          "-rdynamic",
                          "-fuse-ld=lld",
                          "-s",
                          "-pie",
                          "-no-pie",
                          "-fno-lto",
                          "-ffp-contract=on",
                          "-fno-sanitize=all"}) {
    const OptionMatch match = LookupOption(arg);
    if (match.option == nullptr) {
      ADD_FAILURE() << arg << " is not in the table";
      continue;
    }
    EXPECT_EQ(match.option->flags & kTooHard, 0u) << arg;
  }
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
