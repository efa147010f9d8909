#include "compiler_driver/cc_wrapper/in_process_frontend.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "clang/Basic/CodeGenOptions.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticDriver.h"
#include "clang/Basic/DiagnosticFrontend.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/TargetOptions.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Driver/Compilation.h"
#include "clang/Driver/Driver.h"
#include "clang/Driver/Job.h"
#include "clang/Driver/Options.h"
#include "clang/Driver/Tool.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "compiler_driver/cc_wrapper/argument_processing.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

namespace phaseloop::cc_wrapper {
namespace {

// Diagnostics go to a string; colours when clang would use them on our
// stderr (the driver then passes -fcolor-diagnostics to cc1), and when the
// diagnostic options ask for them whatever stderr is (-fcolor-diagnostics,
// -fdiagnostics-color=always): UseColors once they are known.
class CapturedDiagnostics {
 public:
  explicit CapturedDiagnostics(std::string* text) : out_(*text) {
    out_.enable_colors(isatty(STDERR_FILENO) != 0);
  }
  llvm::raw_string_ostream& stream() { return out_; }
  void UseColors(bool show_colors) { out_.enable_colors(show_colors); }

 private:
  llvm::raw_string_ostream out_;
};

// What clang's driver takes from its stderr for `argv`, on stderr
// `terminal`.
struct TerminalDefaults {
  // clang's parseShowColorsArgs: the last of -f[no-]color-diagnostics and
  // -f[no-]diagnostics-color[=always|never|auto] decides, auto (the
  // default) meaning "if stderr has colours".
  bool show_colors = false;
  // Clang::ConstructJob: without -fmessage-length=N (any N: 0 is "do not
  // wrap", and then the cc1 job gets none), the terminal's width.
  unsigned message_length = 0;
};

TerminalDefaults DriverTerminalDefaults(llvm::ArrayRef<const char*> argv,
                                        const StderrTerminal& terminal) {
  namespace options = clang::driver::options;
  unsigned missing_index = 0, missing_count = 0;
  const llvm::opt::InputArgList args =
      clang::driver::getDriverOptTable().ParseArgs(
          argv.drop_front(), missing_index, missing_count);
  TerminalDefaults defaults;
  if (!args.hasArg(options::OPT_fmessage_length_EQ)) {
    defaults.message_length = terminal.columns;
  }
  enum { kOn, kOff, kAuto } colors = kAuto;
  for (const llvm::opt::Arg* arg : args) {
    const llvm::opt::Option& option = arg->getOption();
    if (option.matches(options::OPT_fcolor_diagnostics)) {
      colors = kOn;
    } else if (option.matches(options::OPT_fno_color_diagnostics)) {
      colors = kOff;
    } else if (option.matches(options::OPT_fdiagnostics_color_EQ)) {
      const llvm::StringRef value = arg->getValue();
      if (value == "always") colors = kOn;
      if (value == "never") colors = kOff;
      if (value == "auto") colors = kAuto;
    }
  }
  defaults.show_colors =
      colors == kOn || (colors == kAuto && terminal.has_colors);
  return defaults;
}

// Whether the unit holds a diagnostic pragma that maps anything to a
// warning, an error or a fatal error: the level of a backend warning may
// then differ at its function's location from the flags' level.
class DiagnosticPragmaWatcher : public clang::PPCallbacks {
 public:
  explicit DiagnosticPragmaWatcher(bool* seen) : seen_(seen) {}
  void PragmaDiagnostic(clang::SourceLocation, llvm::StringRef,
                        clang::diag::Severity mapping,
                        llvm::StringRef) override {
    if (mapping != clang::diag::Severity::Ignored) *seen_ = true;
  }

 private:
  bool* seen_;
};

// clang's action, watching the diagnostic pragmas.
class WatchedEmitLlvmOnlyAction : public clang::EmitLLVMOnlyAction {
 public:
  using clang::EmitLLVMOnlyAction::EmitLLVMOnlyAction;
  bool diagnostic_pragma_seen = false;

 protected:
  bool BeginSourceFileAction(clang::CompilerInstance& instance) override {
    instance.getPreprocessor().addPPCallbacks(
        std::make_unique<DiagnosticPragmaWatcher>(&diagnostic_pragma_seen));
    return clang::EmitLLVMOnlyAction::BeginSourceFileAction(instance);
  }
};

// What clang would show of its backend's warnings (ir::ClangShownWarnings),
// from the levels the flags give them; everything when `pragma_seen`.
ir::ClangShownWarnings ShownWarnings(clang::DiagnosticsEngine& diagnostics,
                                     bool pragma_seen) {
  ir::ClangShownWarnings shown;
  if (pragma_seen) return shown;
  auto shows = [&](unsigned id) {
    return diagnostics.getDiagnosticLevel(id, clang::SourceLocation()) !=
           clang::DiagnosticsEngine::Ignored;
  };
  shown.pass_failed = shows(clang::diag::warn_fe_backend_optimization_failure);
  shown.frame_larger_than =
      shows(clang::diag::warn_fe_frame_larger_than) ||
      shows(clang::diag::warn_fe_backend_frame_larger_than);
  shown.attribute_warning = shows(clang::diag::warn_fe_backend_warning_attr);
  shown.optimization_remarks = false;  // -R flags go to clang
  return shown;
}

// Sends each driver diagnostic to the printer of its place in clang's
// output for the whole command line: "input unused" warnings come first
// (the driver emits them while planning, once per command line), then each
// job's own (e.g. "-O4 is equivalent to -O3", once per source), then
// "argument unused during compilation" (once, after every job is built).
// The wrapper runs the driver once per source and reassembles them.
class DriverDiagnosticRouter : public clang::DiagnosticConsumer {
 public:
  DriverDiagnosticRouter(clang::DiagnosticConsumer* before,
                         clang::DiagnosticConsumer* job,
                         clang::DiagnosticConsumer* after)
      : before_(before), job_(job), after_(after) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    switch (info.getID()) {
      case clang::diag::warn_drv_input_file_unused:
      case clang::diag::warn_drv_input_file_unused_by_cpp:
        before_->HandleDiagnostic(level, info);
        break;
      case clang::diag::warn_drv_unused_argument:
        after_->HandleDiagnostic(level, info);
        break;
      default:
        job_->HandleDiagnostic(level, info);
    }
  }

 private:
  clang::DiagnosticConsumer* before_;
  clang::DiagnosticConsumer* job_;
  clang::DiagnosticConsumer* after_;
};

// The warning groups whose notes clang 16 prints in an order that depends
// on where its heap put the AST (the unsafe-buffer analysis keeps gadgets
// in containers ordered by pointer): the same source gives the same lines
// in another order here than in the clang binary. Found by the argv fuzzer
// (tests/argv_fuzz): `-O2 -Wunsafe-buffer-usage structs.c`.
bool OrderDependsOnHeap(unsigned diagnostic_id) {
  return clang::DiagnosticIDs::getWarningOptionForDiag(diagnostic_id) ==
         "unsafe-buffer-usage";
}

// Forwards every cc1 diagnostic to the printer, counting them as the
// printer would (clang's "N warnings generated." reads this client's
// count), and notes whether one of them is printed in a heap-dependent
// order.
class Cc1Diagnostics : public clang::DiagnosticConsumer {
 public:
  Cc1Diagnostics(llvm::raw_ostream& out, clang::DiagnosticOptions* options)
      : printer_(out, options) {}

  bool heap_ordered() const { return heap_ordered_; }

  void BeginSourceFile(const clang::LangOptions& lang_options,
                       const clang::Preprocessor* pp) override {
    printer_.BeginSourceFile(lang_options, pp);
  }
  void EndSourceFile() override { printer_.EndSourceFile(); }
  void finish() override { printer_.finish(); }
  void clear() override {
    clang::DiagnosticConsumer::clear();
    printer_.clear();
  }
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (OrderDependsOnHeap(info.getID())) heap_ordered_ = true;
    printer_.HandleDiagnostic(level, info);
  }

 private:
  clang::TextDiagnosticPrinter printer_;
  bool heap_ordered_ = false;
};

}  // namespace

ClangLocation LocateClang(const std::string& clang) {
  ClangLocation location;
  std::string found;
  if (clang.find('/') != std::string::npos) {
    found = clang;
  } else if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      std::string candidate =
          (end == start ? std::string(".") : dirs.substr(start, end - start)) +
          "/" + clang;
      if (access(candidate.c_str(), X_OK) == 0) {
        found = candidate;
        break;
      }
      start = end + 1;
    }
  }
  if (found.empty()) return location;
  char real[PATH_MAX];
  if (realpath(found.c_str(), real) == nullptr) return location;
  location.executable = real;
  location.as_found = found;
  if (found[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) return ClangLocation();
    found = std::string(cwd) + "/" + found;
  }
  location.installed_dir = found.substr(0, found.rfind('/'));
  return location;
}

StderrTerminal StderrTerminal::Now() {
  return StderrTerminal{llvm::sys::Process::StandardErrHasColors(),
                        llvm::sys::Process::StandardErrColumns()};
}

InProcessFrontendRun RunFrontendInProcess(
    const std::string& clang_path, bool cxx,
    const std::vector<std::string>& frontend_args, llvm::LLVMContext& context,
    const StderrTerminal& terminal) {
  InProcessFrontendRun run;
  const ClangLocation location = LocateClang(clang_path);
  // clang's driver.cpp: the last of -canonical-prefixes and
  // -no-canonical-prefixes decides how it names itself.
  bool canonical_prefixes = true;
  for (const std::string& arg : frontend_args) {
    if (arg == "-canonical-prefixes") canonical_prefixes = true;
    if (arg == "-no-canonical-prefixes") canonical_prefixes = false;
  }
  const std::string& clang =
      canonical_prefixes ? location.executable : location.as_found;
  if (clang.empty()) {
    run.error = "frontend_failed: cannot find " + clang_path;
    return run;
  }
  // The module stays in memory: the -o the arguments carry is never written.
  std::vector<const char*> argv = {clang.c_str()};
  if (cxx) argv.push_back("--driver-mode=g++");
  for (const std::string& arg : frontend_args) {
    if (arg == kDependencyPlaceholder) {
      run.error =
          "frontend_failed: the dependency-file placeholder was not "
          "replaced by a path";
      return run;
    }
    argv.push_back(arg == kBitcodePlaceholder ? "/dev/null" : arg.c_str());
  }

  CapturedDiagnostics captured(&run.diagnostics);
  CapturedDiagnostics driver_before(&run.driver_diagnostics_before);
  CapturedDiagnostics driver_job(&run.driver_diagnostics);
  CapturedDiagnostics driver_after(&run.driver_diagnostics_after);
  // The driver's diagnostics as clang's own driver sets them up (clang's
  // driver.cpp): options from the user's -W/-Werror/-w/colour flags, the
  // warning options applied (so -Werror turns "argument unused during
  // compilation" into an error and -Wno-unused-command-line-argument
  // silences it), and the executable's name as the prefix ("clang: ").
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> driver_options(
      clang::CreateAndPopulateDiagOpts(argv).release());
  // As on `terminal`, not on this process's stderr (a capture file); the
  // driver then passes -fcolor-diagnostics to the cc1 job as clang's does.
  const TerminalDefaults terminal_defaults =
      DriverTerminalDefaults(argv, terminal);
  driver_options->ShowColors = terminal_defaults.show_colors;
  for (CapturedDiagnostics* d : {&driver_before, &driver_job, &driver_after}) {
    d->UseColors(driver_options->ShowColors);
  }
  const std::string prefix(llvm::sys::path::stem(clang));
  clang::TextDiagnosticPrinter before_printer(driver_before.stream(),
                                              driver_options.get());
  clang::TextDiagnosticPrinter job_printer(driver_job.stream(),
                                           driver_options.get());
  clang::TextDiagnosticPrinter after_printer(driver_after.stream(),
                                             driver_options.get());
  for (clang::TextDiagnosticPrinter* p :
       {&before_printer, &job_printer, &after_printer}) {
    p->setPrefix(prefix);
  }
  DriverDiagnosticRouter driver_router(&before_printer, &job_printer,
                                       &after_printer);
  clang::DiagnosticsEngine driver_diags(
      llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs>(new clang::DiagnosticIDs),
      driver_options.get(), &driver_router, /*ShouldOwnClient=*/false);
  clang::ProcessWarningOptions(driver_diags, *driver_options,
                               /*ReportDiags=*/false);
  clang::driver::Driver driver(clang, llvm::sys::getDefaultTargetTriple(),
                               driver_diags, "clang LLVM compiler");
  driver.setInstalledDir(location.installed_dir);
  std::unique_ptr<clang::driver::Compilation> compilation(
      driver.BuildCompilation(argv));
  driver_before.stream().flush();
  driver_job.stream().flush();
  driver_after.stream().flush();
  if (!compilation || driver_diags.hasErrorOccurred()) {
    run.error = "frontend_failed: clang's driver rejected the arguments";
    return run;
  }
  // A clang configuration file (clang.cfg beside clang, --config, the
  // configured directories) adds options the wrapper never read: it took
  // the frontend's half of them and dropped the rest (-fsanitize=address
  // from a config file gave an object without ASan). Left to clang.
  if (!driver.getConfigFiles().empty()) {
    run.error = "config_file: clang reads a configuration file (" +
                driver.getConfigFiles().front() +
                ") whose options the wrapper has not classified; clang "
                "compiles";
    return run;
  }
  const clang::driver::JobList& jobs = compilation->getJobs();
  if (jobs.size() != 1 ||
      std::strcmp(jobs.begin()->getCreator().getName(), "clang") != 0) {
    run.error =
        "frontend_failed: expected one clang -cc1 job, the driver "
        "planned " +
        std::to_string(jobs.size());
    return run;
  }
  std::vector<const char*> cc1_args(jobs.begin()->getArguments().begin(),
                                    jobs.begin()->getArguments().end());
  if (cc1_args.empty() || std::strcmp(cc1_args.front(), "-cc1") != 0) {
    run.error = "frontend_failed: the driver's job is not clang -cc1";
    return run;
  }
  // Without -fmessage-length=N, clang's driver gives its cc1 job the width
  // of a terminal stderr (Clang::ConstructJob); here stderr is a capture
  // file, so the terminal's width is given as clang would give it.
  const std::string message_length =
      "-fmessage-length=" + std::to_string(terminal_defaults.message_length);
  if (terminal_defaults.message_length != 0) {
    cc1_args.push_back(message_length.c_str());
  }

  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(
          *invocation, llvm::ArrayRef<const char*>(cc1_args).drop_front(),
          driver_diags, clang.c_str())) {
    driver_job.stream().flush();
    run.error = "frontend_failed: clang -cc1 rejected the arguments";
    return run;
  }
  // A profile clang's pass pipeline would read (IR-level, from
  // -fprofile-generate) never reaches the wrapper's pipeline; one from the
  // frontend's own instrumentation is read below, into the IR.
  if (const clang::CodeGenOptions& codegen = invocation->getCodeGenOpts();
      codegen.hasProfileIRUse()) {
    run.error = "ir_profile: " + codegen.ProfileInstrumentUsePath +
                " is an IR-level profile (-fprofile-generate), read by "
                "clang's pass pipeline; use one from "
                "-fprofile-instr-generate";
    return run;
  }
#if defined(__SANITIZE_ADDRESS__)
  // clang's driver passes -disable-free: a one-shot process leaves its AST
  // to exit() (the wrapper runs each frontend in a child that exits). Under
  // ASan's leak checker, tests that run many frontends in one process free
  // it, so that what the checker reports are real leaks.
  invocation->getFrontendOpts().DisableFree = false;
  invocation->getCodeGenOpts().DisableFree = false;  // the target machine
#endif
  clang::CompilerInstance instance;
  instance.setInvocation(invocation);
  captured.UseColors(invocation->getDiagnosticOpts().ShowColors);
  auto* cc1_diagnostics =
      new Cc1Diagnostics(captured.stream(), &invocation->getDiagnosticOpts());
  instance.createDiagnostics(cc1_diagnostics, /*ShouldOwnClient=*/true);
  // "N warnings generated." goes there, after the diagnostics, as clang's.
  instance.setVerboseOutputStream(captured.stream());
  WatchedEmitLlvmOnlyAction action(&context);
  bool ok = instance.ExecuteAction(action);
  captured.stream().flush();
  if (!ok || instance.getDiagnostics().hasErrorOccurred()) {
    run.error = "frontend_failed: clang reported errors";
    return run;
  }
  if (cc1_diagnostics->heap_ordered()) {
    run.error =
        "unstable_diagnostics: -Wunsafe-buffer-usage notes come in an order "
        "that depends on clang's heap; plain clang prints its own";
    return run;
  }
  run.module = action.takeModule();
  if (run.module == nullptr) run.error = "frontend_failed: no module";
  run.shown_warnings =
      ShownWarnings(instance.getDiagnostics(), action.diagnostic_pragma_seen);
  // The target options as the frontend completed them (clang's backend
  // builds its TargetMachine from these: BackendUtil.cpp).
  const clang::TargetOptions& target = instance.getTargetOpts();
  run.target_cpu = target.CPU;
  run.target_features = llvm::join(target.Features, ",");
  return run;
}

}  // namespace phaseloop::cc_wrapper
