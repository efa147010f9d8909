#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_IN_PROCESS_FRONTEND_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_IN_PROCESS_FRONTEND_H_

// clang's frontend in this process (clang 16's libraries, linked
// statically): the user's compile arguments for one source
// (CompileJob::frontend_args) go through clang's own driver, as the clang
// binary at `clang_path` would run them, and its one cc1 job runs here to an
// unoptimised llvm::Module in memory: no second process, no bitcode file, no
// re-parse. The dependency file is written where the arguments say, exactly
// as clang writes it (the caller replaces kDependencyPlaceholder with a
// path first; left in, the run fails). The driver's diagnostics follow the
// user's warning flags as clang's driver does (an unused argument under -Werror
// is an error, and the run fails so that plain clang reports it). Diagnostics
// are captured, not shown (the wrapper shows them once it succeeds; on a
// fallback plain clang shows its own), coloured and wrapped as clang would
// on the stderr described by a StderrTerminal (taken before the wrapper's
// child sent stderr to its capture file). A run whose diagnostics clang prints
// in a heap-dependent order (the unsafe-buffer-usage notes) fails with
// "unstable_diagnostics": only the clang binary can print them in the clang
// binary's order. A profile given with -fprofile-instr-use= / -fprofile-use= is
// read here, by clang's frontend, into the module (branch weights, entry
// counts, the profile summary) when it comes from clang's frontend
// instrumentation
// (-fprofile-instr-generate); an IR-level profile (-fprofile-generate),
// which clang's pass pipeline would read, fails with "ir_profile".
//
// A crash in clang's code crashes this process: the wrapper runs this in its
// forked child (child_process.h), so it costs only a fallback.

#include <memory>
#include <string>
#include <vector>

#include "compiler_driver/ir/collected_diagnostics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace phaseloop::cc_wrapper {

struct InProcessFrontendRun {
  std::unique_ptr<llvm::Module> module;  // null when it failed
  // What clang would print, in its order for a whole command line: the
  // driver's "input unused" warnings (once per command line), its warnings
  // for this source's job (once per source), "argument unused during
  // compilation" (once per command line), then the cc1 job's own.
  std::string driver_diagnostics_before;
  std::string driver_diagnostics;
  std::string driver_diagnostics_after;
  std::string diagnostics;
  std::string error;  // why it failed: "reason: detail"
  // What clang gives its code generator: the cc1 job's -target-cpu and its
  // target features (comma-joined), as its backend would take them.
  std::string target_cpu;
  std::string target_features;
  // The backend warnings clang would show for this unit: its flags' level
  // for each (-w, -Wno-pass-failed, ...), and optimisation remarks never,
  // unless a `#pragma clang/GCC diagnostic` maps anything to a warning or
  // an error (then everything counts as shown: the level may differ at the
  // function's location).
  ir::ClangShownWarnings shown_warnings;
};

// What clang's driver reads from its stderr: whether colours show there
// (llvm::sys::Process::StandardErrHasColors: a terminal whose TERM has
// them), the default of -f[no-]color-diagnostics, and the width it wraps
// at (StandardErrColumns: COLUMNS on a terminal, else 0), the default of
// -fmessage-length. The wrapper's child sends stderr to a capture file, so
// it takes these first: on a terminal its warnings were neither coloured
// nor wrapped where clang's were.
struct StderrTerminal {
  bool has_colors = false;
  unsigned columns = 0;
  // This process's stderr now.
  static StderrTerminal Now();
};

// `clang_path`: the clang the user's build would run (a name looked up on
// PATH, or a path); its real location decides the resource directory and
// installation, as for clang itself. `cxx`: clang++ (driver mode g++).
// `terminal`: the stderr clang would print to.
InProcessFrontendRun RunFrontendInProcess(
    const std::string& clang_path, bool cxx,
    const std::vector<std::string>& frontend_args, llvm::LLVMContext& context,
    const StderrTerminal& terminal = StderrTerminal::Now());

// Where clang is, as the clang binary works it out for itself when run as
// `clang` (looked up on PATH when it has no '/'): its real path (which
// decides the resource directory) and the absolute directory it was found
// in, not resolved (which decides where the GCC installation is looked for:
// found as /bin/clang-16 on a merged-/usr system, headers are named
// /bin/../lib/gcc/...). Empty when it cannot be found.
struct ClangLocation {
  std::string executable;  // symbolic links resolved (clang's default)
  // As found (the given path, or the PATH entry that holds it), links kept:
  // what clang calls itself under -no-canonical-prefixes (its resource
  // directory, so the headers' paths in .d files and debug info, and the
  // "clang-16:" prefix of its driver's diagnostics follow from it).
  std::string as_found;
  std::string installed_dir;
};
ClangLocation LocateClang(const std::string& clang);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_IN_PROCESS_FRONTEND_H_
