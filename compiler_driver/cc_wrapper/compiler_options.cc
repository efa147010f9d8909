#include "compiler_driver/cc_wrapper/compiler_options.h"

#include <algorithm>
#include <iterator>

namespace phaseloop::cc_wrapper {
namespace {

// Short spellings for the table.
constexpr unsigned kArg = kTakesArg;
constexpr unsigned kJoin = kTakesConcatArg;
constexpr unsigned kPath = kTakesPath;

// Why an option is too hard; each group is plain kTooHard, named so that the
// table says why.
//
// The wrapper compiles in three steps: clang's frontend with the user's
// flags and -disable-llvm-passes (so everything the frontend decides lands in
// the IR: attributes, module flags, debug info), then its own pass pipeline,
// then its own backend configured from the IR and CodegenFlags. An option is
// fine if it only acts in the frontend, in the IR, or at link time (clang
// ignores those with -c); it is too hard if it acts in one of the other two
// steps or adds outputs those steps would have to write.

// Changes which LLVM passes run or how clang tunes them (vectorizers,
// unrolling, plugins, raw -mllvm/-Xclang flags, remarks from the passes).
constexpr unsigned kPipeline = kTooHard;
// Instrumentation: adds passes to the pipeline (sanitizers, PGO, coverage,
// XRay, -pg) or needs a profile the pipeline would read.
constexpr unsigned kInstrumentation = kTooHard;
// Backend/MC settings clang passes to the TargetMachine rather than through
// the IR: fast-math TargetOptions, FP contraction, section layout, the
// assembler, split or compressed DWARF, debugger tuning, relaxation.
constexpr unsigned kBackend = kTooHard;
// Writes extra files named after the output or the input (temps, time
// traces, stack usage, optimisation records, compilation database entries).
constexpr unsigned kExtraOutput = kTooHard;
// Modes the wrapper does not model: OpenMP, modules, LTO-only features,
// experimental features, driver verbosity (-v, -H: clang prints each
// header as it is read, interleaved with its diagnostics), options that
// smuggle arbitrary flags past the table, and the options that begin with
// "-obj" (Darwin's "-object", "-objcmt-*", "-object-file-name="), which
// would otherwise read as "-o" joined to a path.
constexpr unsigned kUnmodelled = kTooHard;

// Sorted by name (byte order; compiler_options_test checks it). Mode options
// (-c, -S, -E, -M, -MM, -emit-llvm, -fsyntax-only, -flto, -O) are only
// spellings here: argument processing gives them their meaning.
constexpr CompilerOption kOptions[] = {
    {"-###", kUnmodelled},
    {"--coverage", kInstrumentation},
    {"--save-temps", kExtraOutput},
    {"--sysroot", kArg | kPath},
    {"--sysroot=", kJoin | kPath},
    {"--target=", kJoin},
    {"-B", kArg | kJoin | kPath},
    {"-D", kArg | kJoin},
    {"-E", 0},
    {"-H", kUnmodelled},
    {"-I", kArg | kJoin | kPath},
    {"-L", kArg | kJoin | kPath},
    {"-M", 0},
    {"-MD", 0},
    {"-MF", kArg | kJoin | kPath},
    {"-MG", 0},
    {"-MJ", kArg | kJoin | kPath | kExtraOutput},
    {"-MM", 0},
    {"-MMD", 0},
    {"-MP", 0},
    {"-MQ", kArg | kJoin},
    {"-MT", kArg | kJoin},
    {"-O", kJoin},
    {"-Ofast", kBackend},
    {"-Qunused-arguments", 0},
    {"-Rpass", kJoin | kPipeline},
    {"-S", 0},
    {"-T", kArg | kJoin | kPath},
    {"-U", kArg | kJoin},
    {"-W", kJoin},
    {"-Wa,", kJoin | kBackend},
    {"-Wl,", kJoin},
    {"-Wp,", kJoin | kUnmodelled},
    {"-Xarch_", kJoin | kUnmodelled},
    {"-Xassembler", kArg | kBackend},
    {"-Xclang", kArg | kPipeline},
    {"-Xlinker", kArg},
    {"-Xpreprocessor", kArg | kUnmodelled},
    {"-ansi", 0},
    {"-arch", kArg},
    {"-c", 0},
    {"-coverage", kInstrumentation},
    {"-emit-ast", kUnmodelled},
    {"-emit-llvm", 0},
    {"-fPIC", 0},
    {"-fPIE", 0},
    {"-faddrsig", 0},
    {"-faligned-allocation", 0},
    {"-fapprox-func", kBackend},
    {"-fasynchronous-unwind-tables", 0},
    {"-fauto-profile", kJoin | kInstrumentation},
    {"-fbasic-block-sections=", kJoin | kBackend},
    {"-fbinutils-version=", kJoin | kBackend},
    {"-fbuiltin", 0},
    {"-fcf-protection", kJoin},
    {"-fchar8_t", 0},
    {"-fcolor-diagnostics", 0},
    {"-fcommon", 0},
    {"-fconstexpr-depth=", kJoin},
    {"-fconstexpr-steps=", kJoin},
    {"-fcoverage-mapping", kInstrumentation},
    {"-fcs-profile-generate", kJoin | kInstrumentation},
    {"-fcxx-exceptions", 0},
    {"-fcxx-modules", kUnmodelled},
    {"-fdata-sections", 0},
    {"-fdebug-compilation-dir=", kJoin | kPath},
    {"-fdebug-info-for-profiling", kInstrumentation},
    {"-fdebug-prefix-map=", kJoin},
    {"-fdebug-types-section", kBackend},
    {"-fdelete-null-pointer-checks", 0},
    {"-fdiagnostics-", kJoin},
    // SARIF and hotness: read by clang's frontend (cc1), whose own
    // diagnostics printer the wrapper replaces.
    {"-fdiagnostics-format=", kJoin | kUnmodelled},
    {"-fdiagnostics-hotness-threshold=", kJoin | kUnmodelled},
    {"-fdiagnostics-show-hotness", kUnmodelled},
    {"-fembed-bitcode", kJoin | kBackend},
    {"-femulated-tls", kBackend},
    {"-ferror-limit=", kJoin},
    {"-fexceptions", 0},
    {"-fexperimental-", kJoin | kUnmodelled},
    {"-ffast-math", kBackend},
    {"-ffile-prefix-map=", kJoin},
    {"-ffinite-loops", 0},
    {"-ffinite-math-only", kBackend},
    {"-ffp-contract=fast", kJoin | kBackend},
    {"-ffp-contract=off", 0},
    {"-ffp-contract=on", 0},
    {"-ffp-model=fast", kBackend},
    {"-ffreestanding", 0},
    {"-ffunction-sections", 0},
    {"-finline-functions", 0},
    {"-finline-hint-functions", 0},
    {"-finstrument-functions", kJoin | kInstrumentation},
    {"-fintegrated-as", 0},
    {"-fjump-tables", 0},
    {"-flto", kJoin},
    {"-fmacro-prefix-map=", kJoin},
    {"-fmath-errno", 0},
    {"-fmerge-all-constants", 0},
    {"-fmerge-functions", kPipeline},
    {"-fmessage-length", kJoin},
    {"-fmodule", kJoin | kUnmodelled},
    {"-fms-extensions", 0},
    {"-fno-PIC", 0},
    {"-fno-PIE", 0},
    {"-fno-addrsig", 0},
    {"-fno-aligned-allocation", 0},
    {"-fno-asynchronous-unwind-tables", 0},
    {"-fno-builtin", kJoin},
    {"-fno-canonical-system-headers", 0},
    {"-fno-char8_t", 0},
    {"-fno-color-diagnostics", 0},
    {"-fno-common", 0},
    {"-fno-cxx-exceptions", 0},
    {"-fno-data-sections", 0},
    {"-fno-delete-null-pointer-checks", 0},
    {"-fno-diagnostics-", kJoin},
    {"-fno-elide-constructors", 0},
    {"-fno-eliminate-unused-debug-types", 0},
    {"-fno-exceptions", 0},
    {"-fno-fast-math", 0},
    {"-fno-finite-loops", 0},
    {"-fno-function-sections", 0},
    {"-fno-honor-infinities", kBackend},
    {"-fno-honor-nans", kBackend},
    {"-fno-inline", kJoin},
    {"-fno-integrated-as", kBackend},
    {"-fno-jump-tables", 0},
    {"-fno-lto", 0},
    {"-fno-math-errno", 0},
    {"-fno-merge-all-constants", 0},
    {"-fno-ms-extensions", 0},
    {"-fno-omit-frame-pointer", 0},
    {"-fno-pic", 0},
    {"-fno-pie", 0},
    {"-fno-plt", 0},
    {"-fno-rtti", 0},
    {"-fno-sanitize", kJoin},
    {"-fno-semantic-interposition", 0},
    {"-fno-signed-zeros", kBackend},
    {"-fno-sized-deallocation", 0},
    {"-fno-slp-vectorize", kPipeline},
    {"-fno-split-machine-functions", 0},
    {"-fno-stack-clash-protection", 0},
    {"-fno-stack-protector", 0},
    {"-fno-standalone-debug", 0},
    {"-fno-strict-aliasing", 0},
    {"-fno-strict-overflow", 0},
    {"-fno-threadsafe-statics", 0},
    {"-fno-tree-slp-vectorize", kPipeline},
    {"-fno-tree-vectorize", kPipeline},
    {"-fno-unique-section-names", 0},
    {"-fno-unroll-loops", kPipeline},
    {"-fno-unwind-tables", 0},
    {"-fno-vectorize", kPipeline},
    {"-fno-wrapv", 0},
    {"-fno-zero-initialized-in-bss", kBackend},
    {"-fomit-frame-pointer", 0},
    {"-fopenmp", kJoin | kUnmodelled},
    {"-foptimization-record-file=", kJoin | kExtraOutput},
    {"-fpass-plugin=", kJoin | kPath | kPipeline},
    {"-fpic", 0},
    {"-fpie", 0},
    {"-fplt", 0},
    {"-fplugin", kJoin | kPipeline},
    {"-fprofile-", kJoin | kInstrumentation},
    // A profile from clang's frontend instrumentation (-fprofile-instr-
    // generate) is read by clang's frontend, which writes it into the IR as
    // branch weights, entry counts and the profile summary: the wrapper's
    // pipeline sees what clang's sees. An IR-level profile (-fprofile-
    // generate) is read by clang's pass pipeline instead: the in-process
    // frontend finds out which kind the file holds and falls back
    // (reason ir_profile, in_process_frontend.h).
    {"-fprofile-instr-use=", kJoin | kPath},
    {"-fprofile-use=", kJoin | kPath},
    {"-fpseudo-probe-for-profiling", kInstrumentation},
    // Bazel passes it on every compile; clang accepts and ignores it.
    {"-frandom-seed=", kJoin},
    {"-frtti", 0},
    {"-fsanitize", kJoin | kInstrumentation},
    {"-fsave-optimization-record", kJoin | kExtraOutput},
    {"-fsemantic-interposition", 0},
    {"-fshort-enums", 0},
    {"-fsigned-char", 0},
    {"-fsized-deallocation", 0},
    {"-fslp-vectorize", kPipeline},
    {"-fsplit-lto-unit", kUnmodelled},
    {"-fsplit-machine-functions", 0},
    {"-fstack-clash-protection", 0},
    {"-fstack-protector", kJoin},
    {"-fstack-size-section", kBackend},
    {"-fstack-usage", kExtraOutput},
    {"-fstandalone-debug", 0},
    {"-fstrict-aliasing", 0},
    {"-fstrict-enums", 0},
    {"-fstrict-overflow", 0},
    {"-fsyntax-only", 0},
    {"-ftemplate-depth=", kJoin},
    {"-ftest-coverage", kInstrumentation},
    {"-fthinlto-index=", kJoin | kUnmodelled},
    {"-fthreadsafe-statics", 0},
    {"-ftime-trace", kJoin | kExtraOutput},
    {"-ftrapv", 0},
    {"-ftree-slp-vectorize", kPipeline},
    {"-ftree-vectorize", kPipeline},
    {"-ftrivial-auto-var-init=", kJoin},
    {"-funique-section-names", 0},
    {"-funroll-loops", kPipeline},
    {"-funsafe-math-optimizations", kBackend},
    {"-funsigned-char", 0},
    {"-funwind-tables", 0},
    {"-fuse-ld=", kJoin},
    {"-fvectorize", kPipeline},
    {"-fvirtual-function-elimination", kUnmodelled},
    {"-fvisibility", kJoin},
    {"-fwhole-program-vtables", kUnmodelled},
    {"-fwrapv", 0},
    {"-fxray", kJoin | kInstrumentation},
    {"-g", 0},
    {"-g0", 0},
    {"-g1", 0},
    {"-g2", 0},
    {"-g3", 0},
    {"-gcolumn-info", 0},
    {"-gdwarf", 0},
    {"-gdwarf-", kJoin},
    {"-gdwarf-aranges", kBackend},
    {"-gdwarf64", kBackend},
    {"-ggdb", kJoin},
    {"-gline-tables-only", 0},
    {"-glldb", kBackend},
    {"-gno-column-info", 0},
    {"-gsce", kBackend},
    {"-gsplit-dwarf", kJoin | kBackend},
    {"-gz", kJoin | kBackend},
    {"-idirafter", kArg | kJoin | kPath},
    {"-imacros", kArg | kJoin | kPath},
    {"-include", kArg | kJoin | kPath},
    {"-include-pch", kArg | kPath},
    {"-iquote", kArg | kJoin | kPath},
    {"-isysroot", kArg | kJoin | kPath},
    {"-isystem", kArg | kJoin | kPath},
    {"-l", kArg | kJoin},
    {"-m16", 0},
    {"-m32", 0},
    {"-m64", 0},
    {"-maes", 0},
    {"-march=", kJoin},
    {"-mavx", kJoin},
    {"-mbmi", kJoin},
    {"-mbranches-within-32B-boundaries", kBackend},
    {"-mcmodel=", kJoin},
    {"-mcpu=", kJoin},
    {"-mcx16", 0},
    {"-meabi", kArg | kBackend},
    {"-mf16c", 0},
    {"-mfloat-abi=", kJoin | kBackend},
    {"-mfma", 0},
    {"-mllvm", kArg | kPipeline},
    {"-mlzcnt", 0},
    {"-mmovbe", 0},
    {"-mno-avx", kJoin},
    {"-mno-implicit-float", 0},
    {"-mno-omit-leaf-frame-pointer", 0},
    {"-mno-red-zone", 0},
    {"-mno-sse", kJoin},
    {"-momit-leaf-frame-pointer", 0},
    {"-mpclmul", 0},
    {"-mpopcnt", 0},
    {"-mred-zone", 0},
    {"-mrelax-all", kBackend},
    {"-mretpoline", 0},
    {"-msse", kJoin},
    {"-mssse3", 0},
    {"-mstackrealign", 0},
    {"-mtune=", kJoin},
    {"-mx32", 0},
    {"-no-canonical-prefixes", 0},
    {"-no-integrated-as", kBackend},
    {"-no-pie", 0},
    {"-nobuiltininc", 0},
    {"-nodefaultlibs", 0},
    {"-nostartfiles", 0},
    {"-nostdinc", kJoin},
    {"-nostdlib", kJoin},
    {"-o", kArg | kJoin | kPath},
    {"-obj", kJoin | kUnmodelled},
    {"-object", kUnmodelled},
    {"-pedantic", kJoin},
    {"-pg", kInstrumentation},
    {"-pie", 0},
    {"-pipe", 0},
    {"-pthread", 0},
    {"-rdynamic", 0},
    {"-rtlib=", kJoin},
    {"-s", 0},
    {"-save-stats", kJoin | kExtraOutput},
    {"-save-temps", kJoin | kExtraOutput},
    {"-shared", 0},
    {"-static", kJoin},
    {"-std=", kJoin},
    {"-stdlib=", kJoin},
    {"-target", kArg},
    {"-u", kArg | kJoin},
    {"-undef", 0},
    {"-unwindlib=", kJoin},
    {"-v", kUnmodelled},
    {"-w", 0},
    {"-x", kArg | kJoin},
    {"-z", kArg},
};

constexpr std::size_t kNumOptions = std::size(kOptions);

const CompilerOption* FindExact(std::string_view name) {
  const CompilerOption* end = kOptions + kNumOptions;
  const CompilerOption* it = std::lower_bound(
      kOptions, end, name,
      [](const CompilerOption& o, std::string_view n) { return o.name < n; });
  return it != end && it->name == name ? it : nullptr;
}

}  // namespace

OptionMatch LookupOption(std::string_view arg) {
  OptionMatch match;
  if (arg.size() < 2 || arg[0] != '-') return match;
  if (const CompilerOption* exact = FindExact(arg)) {
    match.option = exact;
    return match;
  }
  // Longest joined spelling first, as clang does: "-Wl,-z" is "-Wl,", not
  // "-W".
  for (std::size_t len = arg.size() - 1; len >= 2; --len) {
    const CompilerOption* option = FindExact(arg.substr(0, len));
    if (option != nullptr && (option->flags & kTakesConcatArg) != 0) {
      match.option = option;
      match.joined = true;
      match.value = arg.substr(len);
      return match;
    }
  }
  return match;
}

const CompilerOption* OptionTable::begin() const { return kOptions; }
const CompilerOption* OptionTable::end() const {
  return kOptions + kNumOptions;
}
std::size_t OptionTable::size() const { return kNumOptions; }

}  // namespace phaseloop::cc_wrapper
