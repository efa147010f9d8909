#ifndef PHASELOOP_COMPILER_DRIVER_CODEGEN_CODEGEN_OPTIONS_H_
#define PHASELOOP_COMPILER_DRIVER_CODEGEN_CODEGEN_OPTIONS_H_

// What a policy may change in code generation besides the IR pass pipeline,
// and how that travels inside the one pipeline string every record and spec
// carries (policy artifacts' candidates, `fixed:`/`table:` specs, decision
// records, candidates files, evaluation reports).
//
// A compilation pipeline is PassBuilder text, optionally ending in one
// element that names code generator options:
//
//     default<Oz>,codegen<machine-outliner>
//
// `codegen<...>` is not an LLVM pass: SplitPipeline separates it before the
// IR part reaches the pass runner, and the object emitter applies the
// options. Options inside the brackets are separated by ';'. Known options:
//
//   machine-outliner  LLVM's MachineOutliner on every function (clang's
//                     -mllvm -enable-machine-outliner): repeated machine
//                     instruction sequences become calls to one outlined
//                     copy. Not run by clang-16 -Oz on x86-64; ~1 % smaller
//                     .text on real programs, more on some.
//   no-jump-tables    code generation lowers switches to compare-and-branch
//                     trees (and bit tests), never to a jump table in
//                     .rodata: the "no-jump-tables" attribute put on every
//                     function after the IR pipeline, so the optimiser's
//                     lookup tables stay (unlike clang's -fno-jump-tables,
//                     which sets it before). The object equals clang-16's
//                     with -mllvm -min-jump-table-entries=1000000. A
//                     lowering choice only, so meaning is unchanged; after
//                     -Oz, 40 of the Debian corpus's 217 train modules came
//                     out smaller (up to 3.9 %), 7 larger (up to 0.4 %).
//   split-functions   LLVM's MachineFunctionSplitter (clang's
//                     -fsplit-machine-functions): in functions with profile
//                     data (-fprofile-instr-use), blocks the profile never
//                     saw run move to a .text.split. section, so hot code
//                     packs tighter. Functions without a profile are left
//                     alone (the object is as without the option). Layout
//                     only. The object
//                     equals clang-16's with the flag; on mawk with its
//                     profile 1.7 % faster, on bzip2 no gain (BENCHMARKS.md).
//
// Pure string functions; thread-safe.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phaseloop::codegen {

struct CodegenOptions {
  bool machine_outliner = false;
  bool no_jump_tables = false;
  bool split_functions = false;

  bool any() const {
    return machine_outliner || no_jump_tables || split_functions;
  }
  bool operator==(const CodegenOptions& o) const {
    return machine_outliner == o.machine_outliner &&
           no_jump_tables == o.no_jump_tables &&
           split_functions == o.split_functions;
  }
  bool operator!=(const CodegenOptions& o) const { return !(*this == o); }
};

struct SplitPipelineText {
  std::string ir_pipeline;  // PassBuilder text; may be empty
  CodegenOptions codegen;
};

// Splits `pipeline` into its IR part and its codegen options. InvalidArgument
// naming the text when a `codegen<...>` element is not the last top-level
// element, appears twice, names an unknown option, or is malformed. A
// pipeline without such an element is returned whole with no options.
absl::StatusOr<SplitPipelineText> SplitPipeline(absl::string_view pipeline);

// `ir_pipeline` with `options` appended as a `codegen<...>` element (the
// pipeline unchanged when no option is set).
std::string JoinPipeline(absl::string_view ir_pipeline,
                         const CodegenOptions& options);

// "machine-outliner", "no-jump-tables", ';'-separated when several, in
// that order; "" for none.
std::string CodegenOptionsText(const CodegenOptions& options);

}  // namespace phaseloop::codegen

#endif  // PHASELOOP_COMPILER_DRIVER_CODEGEN_CODEGEN_OPTIONS_H_
