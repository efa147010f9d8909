// phaseloop-cc agrees with plain clang-16 on what LLVM's backend reports:
// warnings (-Wframe-larger-than, the `warning` attribute, a loop
// transformation a pragma forces), its errors, and the warnings clang's
// flags hide. The same command line runs with clang and with the wrapper
// (clang_agreement_fixture.h).
#include <map>
#include <string>
#include <vector>

#include "compiler_driver/cc_wrapper/clang_agreement_fixture.h"

namespace phaseloop::cc_wrapper {
namespace {

using clang_agreement::ClangAgreementTest;
using clang_agreement::Side;
using testing::AbsolutePath;

// Diagnostics of LLVM's backend: clang reports them with their source
// location, under -Werror as errors and under -w not at all; the wrapper's
// contexts would print them raw and pass a -Werror build clang fails.
TEST_F(ClangAgreementTest, BackendDiagnosticsAreClangs) {
  const std::map<std::string, std::string> sources = {
      {"frame.c",
       "void use(char *);\n"
       "void big(void) { char buffer[4096]; use(buffer); }\n"},
      {"attr.c",
       "void old(void) __attribute__((warning(\"do not call\")));\n"
       "void call(void) { old(); }\n"}};
  ExpectAgreement({"-c", "-O2", "-Wframe-larger-than=100", "frame.c"}, {},
                  sources);
  ExpectAgreement(
      {"-c", "-O2", "-Werror", "-Wframe-larger-than=100", "frame.c"}, {},
      sources);
  ExpectAgreement({"-c", "-O2", "-w", "-Wframe-larger-than=100", "frame.c"}, {},
                  sources);
  ExpectAgreement({"-c", "-O2", "-Werror", "attr.c"}, {}, sources);
  // Under -w the frontend asks the backend for no stack-size warning.
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"backend_diagnostics",
                                                 "backend_diagnostics", "",
                                                 "backend_diagnostics"}));
}

// Errors LLVM's backend reports are the program's (invalid inline asm, a
// call to a function marked `error`): clang fails with its own message, and
// so does the wrapper, recording backend_failed, not optimizer_crashed
// (without a handler LLVM exited the optimizer with status 1).
TEST_F(ClangAgreementTest, BackendErrorsAreTheProgramsNotCrashes) {
  const std::map<std::string, std::string> sources = {
      {"asm.c", "void f(void) { __asm__(\"bogusinstr %%eax\"); }\n"},
      {"dce.c",
       "void bad(void) __attribute__((error(\"never call bad\")));\n"
       "void use(void) { bad(); }\n"}};
  ExpectAgreement({"-c", "-O2", "asm.c"}, {}, sources);
  ExpectAgreement({"-c", "-O2", "dce.c"}, {}, sources);
  EXPECT_EQ(Reasons(),
            (std::vector<std::string>{"backend_failed", "backend_failed"}));
}

// Warnings only clang's own pipeline prints (a forced loop transformation
// it could not make, a frame over the limit): a policy's other pipeline
// printed none, so a -Werror build clang fails passed. clang's pipeline
// runs on a copy for them, and the compile falls back.
TEST_F(ClangAgreementTest, ClangsPipelineWarningsAreKeptUnderAnyPolicy) {
  const std::map<std::string, std::string> sources = {
      {"pv.c",
       "int ext(int);\nvoid f(int *a, int n) {\n"
       "#pragma clang loop vectorize(enable)\n"
       "  for (int i = 0; i < n; i++) a[i] = ext(a[i]);\n}\n"},
      {"fr.c",
       "void ext(char *);\nint f(void) { char b[400]; ext(b); return 1; }\n"}};
  const std::vector<std::vector<std::string>> commands = {
      {"-Oz", "-Werror", "-c", "pv.c"},
      {"-O2", "-Werror", "-Wframe-larger-than=100", "-c", "fr.c"}};
  for (const std::vector<std::string>& args : commands) {
    SCOPED_TRACE(args.back());
    const Side theirs = RunIn(clang_, "clang-16", args, {}, sources);
    ASSERT_NE(theirs.exit_code, 0) << theirs.output;  // -Werror: an error
    std::vector<std::string> ours_args = {
        "--phaseloop-policy=fixed:function(mem2reg)"};
    ours_args.insert(ours_args.end(), args.begin(), args.end());
    const Side ours =
        RunIn(wrapper_, AbsolutePath(kWrapper), ours_args, {}, sources);
    EXPECT_EQ(ours.exit_code, theirs.exit_code);
    EXPECT_EQ(ours.output, theirs.output);
  }
  EXPECT_EQ(Reasons(), (std::vector<std::string>{"backend_diagnostics",
                                                 "backend_diagnostics"}));
}

// Backend warnings clang would not show (-w, -Wno-pass-failed,
// -Wno-frame-larger-than, -Wno-attribute-warning), and the vectorizer's
// remarks on a loop a pragma forces, which clang shows only under -R
// flags: LLVM printed them and every such compile fell back to clang
// (fail_open) for nothing. A diagnostic pragma mapping anything to a
// warning keeps the fallback (the level may differ at the function).
TEST_F(ClangAgreementTest, WarningsClangWouldNotShowDoNotSendACompileToClang) {
  const std::map<std::string, std::string> sources = {
      {"pv.c",
       "int ext(int);\nvoid f(int *a, int n) {\n"
       "#pragma clang loop vectorize(enable)\n"
       "  for (int i = 0; i < n; i++) a[i] = ext(a[i]);\n}\n"},
      {"pragma.c",
       "int ext(int);\n"
       "#pragma clang diagnostic warning \"-Wpass-failed\"\n"
       "void f(int *a, int n) {\n"
       "#pragma clang loop vectorize(enable)\n"
       "  for (int i = 0; i < n; i++) a[i] = ext(a[i]);\n}\n"},
      {"fr.c",
       "void ext(char *);\nint f(void) { char b[400]; ext(b); return 1; }\n"
       "void old(void) __attribute__((warning(\"do not call\")));\n"
       "void call(void) { old(); }\n"}};
  struct Case {
    std::vector<std::string> args;
    std::string reason;  // "" for optimised
  };
  const Case cases[] = {
      {{"-O2", "-w", "-c", "pv.c"}, ""},
      {{"-O2", "-Wno-pass-failed", "-c", "pv.c"}, ""},
      {{"-O3", "-Werror", "-Wno-everything", "-c", "pv.c"}, ""},
      {{"-O2", "-c", "pv.c"}, "backend_diagnostics"},
      {{"-O2", "-Wno-pass-failed", "-c", "pragma.c"}, "backend_diagnostics"},
      {{"-O2", "-Wframe-larger-than=100", "-Wno-frame-larger-than",
        "-Wno-attribute-warning", "-c", "fr.c"},
       ""},
      {{"-O2", "-Wframe-larger-than=100", "-Wno-frame-larger-than", "-c",
        "fr.c"},
       "backend_diagnostics"}};
  for (const std::string policy : {"fixed:default<O1>", "baseline"}) {
    for (const Case& c : cases) {
      std::vector<std::string> args = c.args;
      std::string command;
      for (const std::string& arg : args) command += arg + " ";
      SCOPED_TRACE(command + "under " + policy);
      const Side theirs = RunIn(clang_, "clang-16", args, {}, sources);
      args.insert(args.begin(), "--phaseloop-policy=" + policy);
      const Side ours =
          RunIn(wrapper_, AbsolutePath(kWrapper), args, {}, sources);
      EXPECT_EQ(ours.exit_code, theirs.exit_code);
      EXPECT_EQ(ours.output, theirs.output);
      const v1::Decision d = wrapper_.Decisions().back();
      EXPECT_EQ(d.reason(), c.reason) << d.detail();
      if (c.reason.empty() && policy == "baseline") {
        EXPECT_EQ(ours.files, theirs.files);  // clang's pipeline: its object
      }
    }
  }
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
