#include "compiler_driver/cc_wrapper/argument_processing.h"

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include "compiler_driver/cc_wrapper/compiler_options.h"
#include "compiler_driver/cc_wrapper/response_file.h"

namespace phaseloop::cc_wrapper {
namespace {

constexpr std::string_view kPolicyFlag = "--phaseloop-policy";
constexpr std::string_view kPhaseloopPrefix = "--phaseloop-";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// ---- paths ---------------------------------------------------------------

// llvm::sys::path::filename for the POSIX paths clang is given.
std::string_view Filename(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// llvm::sys::path::replace_extension: drops everything from the last '.' of
// the filename component (a leading dot counts: "out/.hidden" -> "out/.d"),
// then appends "." + extension. Also clang's naming of the default object
// (Driver::GetNamedOutputPath) and dependency file (getBaseInputStem).
std::string ReplaceExtension(std::string_view path, std::string_view ext) {
  const std::size_t name_start = path.size() - Filename(path).size();
  const std::size_t dot = path.rfind('.');
  std::string result(path);
  if (dot != std::string_view::npos && dot >= name_start) result.resize(dot);
  result += '.';
  result += ext;
  return result;
}

// ---- one left-to-right scan ---------------------------------------------

enum class InputKind { kSource, kPreprocessedSource, kOther };

// Clang's types::lookupTypeForExtension for the C and C++ extensions. Like
// the driver, the extension is whatever follows the path's last '.'.
InputKind KindFromExtension(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  if (dot == std::string_view::npos) return InputKind::kOther;
  const std::string_view ext = path.substr(dot + 1);
  for (std::string_view source :
       {"c", "C", "cc", "CC", "cp", "cpp", "CPP", "c++", "C++", "cxx", "CXX"}) {
    if (ext == source) return InputKind::kSource;
  }
  if (ext == "i" || ext == "ii") return InputKind::kPreprocessedSource;
  return InputKind::kOther;
}

enum class ArgRole { kKept, kSource, kOutput };

struct Source {
  std::size_t index;  // into the scanned arguments
  bool preprocessed;  // .i/.ii: clang runs no preprocessor, writes no .d
};

// Everything the classification needs, gathered in one pass.
struct Scan {
  std::vector<ArgRole> roles;  // one per argument
  std::vector<Source> sources;
  bool compile_only = false;       // -c
  bool assembly = false;           // -S
  bool preprocess = false;         // -E
  bool dependencies_only = false;  // -M, -MM
  bool emit_llvm = false;
  bool syntax_only = false;
  LtoMode lto = LtoMode::kNone;
  std::optional<PassThrough> unknown_lto;  // -flto=VALUE clang rejects
  int arch_count = 0;
  bool dependency_output = false;              // -MD, -MMD
  std::optional<std::string> dependency_file;  // the last -MF
  bool dependency_target_given = false;        // -MT, -MQ
  std::optional<std::string> output;           // the last -o
  std::string opt_level;                       // "" for none or -O0
  CodegenFlags codegen;
  bool stdin_or_stdout = false;
  std::optional<PassThrough> missing_argument, too_hard, unknown_option,
      non_source_input;
};

// "-O<value>" as clang-16 reads it; nullopt for a value clang rejects.
std::optional<std::string> ParseOptLevel(std::string_view value) {
  if (value.empty() || value == "g") return std::string("O1");
  if (value == "s" || value == "z") return "O" + std::string(value);
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const std::size_t first = value.find_first_not_of('0');
  if (first == std::string_view::npos) return std::string();  // -O0
  const std::string_view digits = value.substr(first);
  // -O5 and above, and -O4 spelt otherwise (-O04): clang's frontend warns
  // ("optimization level '-O9' is not supported"), which the wrapper would
  // report its driver's way. (Its driver says -O4 "is equivalent to -O3".)
  if (digits.size() > 1 || digits[0] >= '5') return std::nullopt;
  if (digits[0] == '4' && value != "4") return std::nullopt;
  if (digits[0] >= '3') return std::string("O3");
  return "O" + std::string(digits);
}

void Note(std::optional<PassThrough>* slot, PassThroughReason reason,
          const std::string& detail) {
  if (!slot->has_value()) *slot = PassThrough{reason, detail};
}

Scan ScanArguments(const std::vector<std::string>& args) {
  Scan scan;
  scan.roles.assign(args.size(), ArgRole::kKept);
  // The -x language in force: empty for none (go by extension).
  std::string x_language;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-" || arg.empty() || arg[0] != '-') {  // an input
      if (arg == "-") {
        scan.stdin_or_stdout = true;
        continue;
      }
      if (arg.empty()) {
        // An empty argument is an input clang cannot open (it fails with
        // "no such file or directory: ''"): let it say so (found by
        // argv_fuzzer).
        Note(&scan.non_source_input, PassThroughReason::kNonSourceInput,
             "(an empty argument)");
        continue;
      }
      InputKind kind = KindFromExtension(arg);
      if (!x_language.empty()) {
        kind = x_language == "c" || x_language == "c++" ? InputKind::kSource
                                                        : InputKind::kOther;
      }
      if (kind == InputKind::kOther) {
        Note(&scan.non_source_input, PassThroughReason::kNonSourceInput, arg);
        continue;
      }
      scan.roles[i] = ArgRole::kSource;
      scan.sources.push_back(Source{i, kind == InputKind::kPreprocessedSource});
      continue;
    }
    const OptionMatch match = LookupOption(arg);
    if (match.option == nullptr) {
      Note(&scan.unknown_option, PassThroughReason::kUnknownOption, arg);
      continue;
    }
    const unsigned flags = match.option->flags;
    const std::string_view name = match.option->name;
    std::string value(match.value);
    const std::size_t option_index = i;
    if (!match.joined && (flags & kTakesArg) != 0) {
      if (i + 1 == args.size()) {
        Note(&scan.missing_argument, PassThroughReason::kMissingArgument, arg);
        break;
      }
      value = args[++i];
    }
    if ((flags & kTooHard) != 0) {
      Note(&scan.too_hard, PassThroughReason::kTooHard, arg);
      continue;
    }
    if (name == "-c") {
      scan.compile_only = true;
    } else if (name == "-S") {
      scan.assembly = true;
    } else if (name == "-E") {
      scan.preprocess = true;
    } else if (name == "-M" || name == "-MM") {
      scan.dependencies_only = true;
    } else if (name == "-emit-llvm") {
      scan.emit_llvm = true;
    } else if (name == "-fsyntax-only") {
      scan.syntax_only = true;
    } else if (name == "-flto" || name == "-fno-lto") {
      const LtoFlag flag = ParseLtoFlag(arg);
      if (flag.kind == LtoFlag::kSets) {
        scan.lto = flag.mode;
        scan.unknown_lto.reset();
      } else if (flag.kind == LtoFlag::kRejected) {
        scan.unknown_lto = PassThrough{PassThroughReason::kLto, arg};
      }
    } else if (name == "-arch") {
      ++scan.arch_count;
    } else if (name == "--target=" || name == "-target") {
      // The backend is set up as clang sets it up for Linux (GNU): other
      // systems differ in defaults the wrapper does not model (the
      // address-significance table, COFF timestamps).
      if (value.find("-linux-gnu") == std::string::npos) {
        Note(&scan.too_hard, PassThroughReason::kTooHard,
             match.joined ? arg : arg + " " + value);
      }
    } else if (name == "-o") {
      scan.output = value;
      if (value == "-") scan.stdin_or_stdout = true;
      // -o "" names no file (clang cannot open it): found by argv_fuzzer.
      if (value.empty()) {
        Note(&scan.missing_argument, PassThroughReason::kMissingArgument,
             "-o ''");
      }
      for (std::size_t j = option_index; j <= i; ++j) {
        scan.roles[j] = ArgRole::kOutput;
      }
    } else if (name == "-x") {
      x_language = value == "none" ? std::string() : value;
    } else if (name == "-MD" || name == "-MMD") {
      scan.dependency_output = true;
    } else if (name == "-MF") {
      scan.dependency_file = value;
      if (value == "-") scan.stdin_or_stdout = true;  // clang: to stdout
    } else if (name == "-MT" || name == "-MQ") {
      scan.dependency_target_given = true;
    } else if (name == "-O") {
      std::optional<std::string> level = ParseOptLevel(value);
      if (!level) {
        Note(&scan.unknown_option, PassThroughReason::kUnknownOption, arg);
      } else {
        scan.opt_level = *level;
      }
    } else if (name == "-ffunction-sections") {
      scan.codegen.function_sections = true;
    } else if (name == "-fno-function-sections") {
      scan.codegen.function_sections = false;
    } else if (name == "-fsplit-machine-functions") {
      scan.codegen.split_machine_functions = true;
    } else if (name == "-fno-split-machine-functions") {
      scan.codegen.split_machine_functions = false;
    } else if (name == "-fdata-sections") {
      scan.codegen.data_sections = true;
    } else if (name == "-fno-data-sections") {
      scan.codegen.data_sections = false;
    } else if (name == "-funique-section-names") {
      scan.codegen.unique_section_names = true;
    } else if (name == "-fno-unique-section-names") {
      scan.codegen.unique_section_names = false;
    } else if (name == "-faddrsig") {
      scan.codegen.addrsig = true;
    } else if (name == "-fno-addrsig") {
      scan.codegen.addrsig = false;
    }
  }
  return scan;
}

// ---- classification and jobs --------------------------------------------

// The first reason, in this order: a malformed command line; the mode
// (clang's final phase: -E/-M/-MM, then -fsyntax-only, then -S, then -c;
// -emit-llvm is reported before -S as the more specific); whole-invocation
// features (an -flto= clang rejects, several -arch); options; inputs; the -O
// level.
std::optional<PassThrough> Classify(const Scan& scan) {
  using R = PassThroughReason;
  if (scan.missing_argument) return scan.missing_argument;
  if (scan.preprocess) return PassThrough{R::kPreprocessOnly, "-E"};
  if (scan.dependencies_only) return PassThrough{R::kDependenciesOnly, ""};
  if (scan.syntax_only) return PassThrough{R::kSyntaxOnly, "-fsyntax-only"};
  if (scan.emit_llvm) return PassThrough{R::kEmitLlvm, "-emit-llvm"};
  if (scan.assembly) return PassThrough{R::kAssemblyOutput, "-S"};
  if (!scan.compile_only) {
    // No input at all: a question to the compiler (--version, -v,
    // -print-search-dirs), which a build system's configure asks.
    const bool query =
        scan.sources.empty() && !scan.non_source_input && !scan.stdin_or_stdout;
    return PassThrough{R::kNotCompileOnly, query ? kNoInputDetail : ""};
  }
  if (scan.unknown_lto) return scan.unknown_lto;
  if (scan.arch_count > 1) return PassThrough{R::kMultipleArch, ""};
  if (scan.too_hard) return scan.too_hard;
  if (scan.unknown_option) return scan.unknown_option;
  if (scan.stdin_or_stdout) return PassThrough{R::kStdinOrStdout, "-"};
  if (scan.non_source_input) return scan.non_source_input;
  if (scan.sources.empty()) return PassThrough{R::kNoSourceInput, ""};
  if (scan.output && scan.sources.size() > 1) {
    return PassThrough{R::kMultipleOutputs, *scan.output};
  }
  if (scan.opt_level.empty()) return PassThrough{R::kOptimizationDisabled, ""};
  return std::nullopt;
}

// Dependency-file naming, checked against Debian clang 16.0.6
// (argument_processing_test's RealClang tests compare the .d files):
//  - no -MF: with -o, the -o path with its extension replaced by ".d"
//    (`-o out/b.o` -> out/b.d, `-o out/noext` -> out/noext.d, `-o
//    out/.hidden` -> out/.d); without -o, the source's filename stem + ".d"
//    in the working directory (`src/a.c src/b.c` -> ./a.d, ./b.d);
//  - no -MT/-MQ: the target is the -o path, or the source's filename with
//    ".o", Make-quoted ("out/we ird$#.o" -> "out/we\ ird$$\#.o"), which is
//    what -MQ produces.
CompileJob MakeJob(const std::vector<std::string>& args, const Scan& scan,
                   const Source& source) {
  CompileJob job;
  job.source = args[source.index];
  job.object_path =
      scan.output ? *scan.output : ReplaceExtension(Filename(job.source), "o");
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (scan.roles[i] == ArgRole::kOutput) continue;
    if (scan.roles[i] == ArgRole::kSource && i != source.index) continue;
    job.frontend_args.push_back(args[i]);
  }
  for (const char* extra : {"-emit-llvm", "-Xclang", "-disable-llvm-passes",
                            "-o", kBitcodePlaceholder}) {
    job.frontend_args.push_back(extra);
  }
  // Clang writes no dependency file for preprocessed input (.i/.ii); adding
  // -MF/-MQ there would only add "argument unused" warnings.
  if (scan.dependency_output && !source.preprocessed) {
    if (scan.dependency_file) {
      job.dependency_file = *scan.dependency_file;
    } else {
      job.dependency_file = scan.output
                                ? ReplaceExtension(*scan.output, "d")
                                : ReplaceExtension(Filename(job.source), "d");
    }
    job.frontend_args.push_back("-MF");
    job.frontend_args.push_back(kDependencyPlaceholder);
    if (!scan.dependency_target_given) {
      job.frontend_args.push_back("-MQ");
      job.frontend_args.push_back(job.object_path);
    }
  }
  return job;
}

}  // namespace

StrippedArgs StripPhaseloopFlags(const std::vector<std::string>& args) {
  StrippedArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!StartsWith(arg, kPhaseloopPrefix)) {
      out.args.push_back(arg);
    } else if (arg == kPolicyFlag) {
      ++out.removed;
      if (i + 1 < args.size()) {
        out.policy = args[++i];
      } else if (!out.error) {
        out.error = PassThrough{PassThroughReason::kMissingArgument, arg};
      }
    } else if (StartsWith(arg, std::string(kPolicyFlag) + "=")) {
      ++out.removed;
      out.policy = arg.substr(kPolicyFlag.size() + 1);
    } else {
      out.args.push_back(arg);
      if (!out.error) {
        out.error = PassThrough{PassThroughReason::kUnknownOption, arg};
      }
    }
  }
  return out;
}

const char* LtoModeName(LtoMode mode) {
  switch (mode) {
    case LtoMode::kNone:
      return "none";
    case LtoMode::kFull:
      return "full";
    case LtoMode::kThin:
      return "thin";
  }
  return "none";
}

LtoFlag ParseLtoFlag(std::string_view arg) {
  if (arg == "-fno-lto") return {LtoFlag::kSets, LtoMode::kNone};
  if (arg == "-flto" || arg == "-flto=full" || arg == "-flto=auto" ||
      arg == "-flto=jobserver") {
    return {LtoFlag::kSets, LtoMode::kFull};
  }
  if (arg == "-flto=thin") return {LtoFlag::kSets, LtoMode::kThin};
  if (arg.rfind("-flto=", 0) == 0) return {LtoFlag::kRejected};
  return {};  // -flto-jobs=N, and every other argument
}

const char* PassThroughReasonName(PassThroughReason reason) {
  switch (reason) {
    case PassThroughReason::kNotCompileOnly:
      return "not_compile_only";
    case PassThroughReason::kPreprocessOnly:
      return "preprocess_only";
    case PassThroughReason::kAssemblyOutput:
      return "assembly_output";
    case PassThroughReason::kEmitLlvm:
      return "emit_llvm";
    case PassThroughReason::kDependenciesOnly:
      return "dependencies_only";
    case PassThroughReason::kSyntaxOnly:
      return "syntax_only";
    case PassThroughReason::kLto:
      return "lto";
    case PassThroughReason::kMultipleArch:
      return "multiple_arch";
    case PassThroughReason::kTooHard:
      return "too_hard";
    case PassThroughReason::kUnknownOption:
      return "unknown_option";
    case PassThroughReason::kOptimizationDisabled:
      return "optimization_disabled";
    case PassThroughReason::kNoSourceInput:
      return "no_source_input";
    case PassThroughReason::kNonSourceInput:
      return "non_source_input";
    case PassThroughReason::kStdinOrStdout:
      return "stdin_or_stdout";
    case PassThroughReason::kMultipleOutputs:
      return "multiple_outputs";
    case PassThroughReason::kMissingArgument:
      return "missing_argument";
    case PassThroughReason::kBadResponseFile:
      return "bad_response_file";
    case PassThroughReason::kSpecialOutput:
      return "special_output";
    case PassThroughReason::kDriverOverride:
      return "driver_override";
    case PassThroughReason::kSpecialInput:
      return "special_input";
  }
  return "unknown";
}

// `kind` does not change the classification: both drivers compile C and C++
// sources (clang++ compiles a .c file as C++), and the jobs run the same
// driver the user asked for.
namespace {

// A policy flag inside a response file cannot be removed from the file, so
// plain clang then gets the expanded arguments instead.
std::vector<std::string> ClangArgsOf(StrippedArgs from_original,
                                     StrippedArgs from_expanded) {
  return from_expanded.removed > from_original.removed
             ? std::move(from_expanded.args)
             : std::move(from_original.args);
}

}  // namespace

std::vector<std::string> FallbackClangArgs(
    const std::vector<std::string>& original,
    const std::vector<std::string>& expanded) {
  return ClangArgsOf(StripPhaseloopFlags(original),
                     StripPhaseloopFlags(expanded));
}

std::vector<std::string> FallbackClangArgs(
    const std::vector<std::string>& original) {
  std::string error;
  std::optional<std::vector<std::string>> expanded =
      ExpandResponseFiles(original, &error);
  if (!expanded) return StripPhaseloopFlags(original).args;  // clang says why
  return FallbackClangArgs(original, *expanded);
}

ProcessedArgs ProcessArguments(const std::vector<std::string>& original,
                               const std::vector<std::string>& expanded,
                               DriverKind /*kind*/) {
  StrippedArgs from_original = StripPhaseloopFlags(original);
  StrippedArgs from_expanded = StripPhaseloopFlags(expanded);

  ProcessedArgs processed;
  processed.phaseloop.policy = from_expanded.policy;
  processed.clang_args = ClangArgsOf(std::move(from_original), from_expanded);
  const std::vector<std::string>& args = from_expanded.args;
  const Scan scan = ScanArguments(args);
  // The one source a pass-through's record names ("-", stdin, is a unit
  // too: then there is no one source).
  const std::string one_source =
      scan.sources.size() == 1 && !scan.stdin_or_stdout
          ? args[scan.sources[0].index]
          : std::string();
  if (from_expanded.error) {
    processed.result = *from_expanded.error;
    std::get<PassThrough>(processed.result).source = one_source;
    return processed;
  }
  if (std::optional<PassThrough> pass_through = Classify(scan)) {
    pass_through->source = one_source;
    processed.result = std::move(*pass_through);
    return processed;
  }
  Compilation compilation;
  compilation.opt_level = scan.opt_level;
  compilation.codegen = scan.codegen;
  compilation.lto = scan.lto;
  for (const Source& source : scan.sources) {
    compilation.jobs.push_back(MakeJob(args, scan, source));
  }
  processed.result = std::move(compilation);
  return processed;
}

}  // namespace phaseloop::cc_wrapper
