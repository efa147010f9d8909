#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_ARGUMENT_PROCESSING_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_ARGUMENT_PROCESSING_H_

// The wrapper's argument handling: a pure function from a clang-16 command
// line to either a compilation phaseloop can optimise (one job per source) or
// the typed reason it must run plain clang with the original argv. Nothing
// here touches the file system (response files are expanded before, see
// response_file.h). No LLVM, no absl: the launcher that links this must start
// in about a millisecond.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace phaseloop::cc_wrapper {

// phaseloop-cc drives clang-16, phaseloop-c++ drives clang++-16.
enum class DriverKind { kC, kCxx };

// Why an invocation runs plain clang unchanged. PassThroughReasonName gives
// the stable snake_case name that decision logs and `phaseloop stats` count.
enum class PassThroughReason {
  kNotCompileOnly,        // no -c: linking, or a query such as --version
  kPreprocessOnly,        // -E
  kAssemblyOutput,        // -S
  kEmitLlvm,              // -emit-llvm
  kDependenciesOnly,      // -M / -MM (without -MD / -MMD)
  kSyntaxOnly,            // -fsyntax-only
  kLto,                   // -flto=VALUE clang does not know (detail: it)
  kMultipleArch,          // more than one -arch
  kTooHard,               // an option the table marks too hard (detail: it)
  kUnknownOption,         // an option not in the table (detail: it)
  kOptimizationDisabled,  // -O0 (or no -O): nothing for a policy to do
  kNoSourceInput,         // -c without a C/C++ source
  kNonSourceInput,        // an input that is not C/C++ (assembler, object,
                          // unknown -x language) (detail: it)
  kStdinOrStdout,         // "-" as input, -o - or -MF -
  kMultipleOutputs,       // -o with several sources
  kMissingArgument,       // an option that takes an argument ends the line
  kBadResponseFile,       // an @file that cannot be read
  // An output path (object or dependency file) that exists and is not a
  // regular file: a device (-o /dev/null), a pipe, a symbolic link.
  // clang writes into or through it; the wrapper would rename a new file
  // over it (detail: the path). Found by the launcher (it looks at the file
  // system), not by ProcessArguments.
  kSpecialOutput,
  // CCC_OVERRIDE_OPTIONS is set: clang's driver edits its own command line
  // by it, which the wrapper's reading of the arguments would not see; or
  // one of the variables clang's driver program reads to log what it does
  // (CC_PRINT_OPTIONS, CC_PRINT_HEADERS, CC_LOG_DIAGNOSTICS,
  // CC_PRINT_PROC_STAT), which the wrapper's in-process driver does not.
  kDriverOverride,
  // An input that exists and is not a regular file (/dev/stdin, a pipe
  // from `<(...)`, a FIFO): it can be read once, and the optimiser reading
  // it left a fallback to plain clang an empty stream (broken code passed
  // with an empty object) or, for a FIFO, nothing ever (detail: the path).
  // Found by the launcher.
  kSpecialInput,
};
const char* PassThroughReasonName(PassThroughReason reason);

// The detail of a kNotCompileOnly command with no input at all: a question
// to the compiler (--version, -v, -dumpmachine), as configure scripts ask.
inline constexpr char kNoInputDetail[] = "no input";

struct PassThrough {
  PassThroughReason reason;
  std::string detail;  // the option or input concerned; may be empty
  // The command's source file as it names it, when it names exactly one
  // (recorded with the decision: which unit went to clang); "" otherwise.
  std::string source;
};

// Backend settings clang takes from the command line rather than from the IR
// (target CPU/features, PIC level, code model and debug info travel in the
// module). Defaults are clang-16's on x86-64 Linux.
struct CodegenFlags {
  bool function_sections = false;        // -ffunction-sections
  bool data_sections = false;            // -fdata-sections
  bool unique_section_names = true;      // -fno-unique-section-names
  bool addrsig = true;                   // -faddrsig / -fno-addrsig
  bool split_machine_functions = false;  // -f[no-]split-machine-functions
};

// The link-time optimisation a compile prepares for. Under -flto the
// object is not machine code but clang's bitcode for the linker's LTO:
// -flto, -flto=full, -flto=auto and -flto=jobserver are full LTO (one merged
// module at link time), -flto=thin ThinLTO (with a summary per module).
enum class LtoMode { kNone, kFull, kThin };
// "none", "full", "thin".
const char* LtoModeName(LtoMode mode);

// What one argument says about LTO, as clang-16's driver reads it: the mode
// it sets (-flto, -flto=full|auto|jobserver|thin, -fno-lto); no change
// (-flto-jobs=N, the link's; any non-LTO argument); or a spelling clang
// rejects (-flto=bogus). The wrapper's scan and the lab's reading of
// candidate flags share it.
struct LtoFlag {
  enum Kind { kNoChange, kSets, kRejected } kind = kNoChange;
  LtoMode mode = LtoMode::kNone;  // when kSets
};
LtoFlag ParseLtoFlag(std::string_view arg);

// In CompileJob::frontend_args, stands for the path the unoptimised bitcode
// is to be written to; the runner substitutes a temporary file.
inline constexpr char kBitcodePlaceholder[] = "@PHASELOOP_BITCODE@";
// In CompileJob::frontend_args, stands for the path the dependency file is
// to be written to; the runner substitutes a temporary file and renames it
// to CompileJob::dependency_file only once every object is in place, so a
// compile that falls back leaves no dependency file clang would not write.
inline constexpr char kDependencyPlaceholder[] = "@PHASELOOP_DEPFILE@";

// One source file of a compile-only invocation.
struct CompileJob {
  std::string source;       // as written on the command line
  std::string object_path;  // where plain clang writes its object: -o, or
                            // the source's stem + ".o" in the working dir
  // clang arguments (no argv[0]) that produce this source's unoptimised
  // module at kBitcodePlaceholder, exactly as the plain compile would run
  // the frontend: every user flag in order (warnings, -Werror, -D/-I, -std,
  // -g, -fPIC, -x, ...), the other sources removed, the user's -o removed,
  // then "-emit-llvm", "-Xclang", "-disable-llvm-passes", "-o",
  // kBitcodePlaceholder; and, when dependency output is on (-MD/-MMD), "-MF"
  // kDependencyPlaceholder (after any -MF of the user's: the last one wins)
  // and "-MQ" object_path if the user gave no -MT/-MQ, so that the .d file
  // is byte-identical to plain clang's.
  std::vector<std::string> frontend_args;
  // Where plain clang writes this source's dependency file: the user's last
  // -MF, else named after -o or the source (see MakeJob); empty when clang
  // writes none (no -MD/-MMD, or preprocessed input).
  std::string dependency_file;
};

struct Compilation {
  std::string opt_level;  // "O1", "O2", "O3", "Os", "Oz" (-Og -> "O1",
                          // -O4 and above -> "O3", -O -> "O1")
  CodegenFlags codegen;
  LtoMode lto = LtoMode::kNone;  // the last -flto[=...] / -fno-lto
  std::vector<CompileJob> jobs;  // one per source, in command-line order
};

// Flags for phaseloop itself, removed before clang sees the command line.
struct PhaseloopFlags {
  std::string policy;  // --phaseloop-policy=SPEC (empty: not given)
};

// The --phaseloop-* flags of a command line, the one parser of them (the
// launcher uses it before the rest of the processing, for the kill switch
// and config errors). Removes "--phaseloop-policy=SPEC" and
// "--phaseloop-policy SPEC"; other --phaseloop-* flags stay (plain clang
// then names them as unknown arguments) and make `error` a pass-through.
struct StrippedArgs {
  std::vector<std::string> args;  // without --phaseloop-policy and its SPEC
  int removed = 0;                // how many policy flags were removed
  std::string policy;             // the last SPEC
  std::optional<PassThrough> error;
};
StrippedArgs StripPhaseloopFlags(const std::vector<std::string>& args);

// What plain clang runs with when the wrapper steps aside (kill switch, a
// bad config, any fallback): `original` without the --phaseloop-* flags,
// @files kept, unless a response file holds one, which cannot be removed
// from the file: then the expanded arguments (clang refused the flag read
// from the file, and the build broke, whenever the wrapper fell back).
std::vector<std::string> FallbackClangArgs(
    const std::vector<std::string>& original);
// The same with the response files already expanded (`expanded`), so that
// they are read once.
std::vector<std::string> FallbackClangArgs(
    const std::vector<std::string>& original,
    const std::vector<std::string>& expanded);

struct ProcessedArgs {
  PhaseloopFlags phaseloop;
  // The caller's arguments (no argv[0]) with the --phaseloop-* flags
  // removed: what plain clang runs with on pass-through and fail-open.
  std::vector<std::string> clang_args;
  std::variant<Compilation, PassThrough> result;
};

// `args` excludes argv[0]. Response files must already be expanded for the
// classification (pass `expanded`), while clang_args keeps `original`
// (unexpanded @files) so the fallback is the user's exact command.
ProcessedArgs ProcessArguments(const std::vector<std::string>& original,
                               const std::vector<std::string>& expanded,
                               DriverKind kind);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_ARGUMENT_PROCESSING_H_
