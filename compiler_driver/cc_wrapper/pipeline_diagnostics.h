#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_PIPELINE_DIAGNOSTICS_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_PIPELINE_DIAGNOSTICS_H_

// Diagnostics that depend on the pipeline. clang's own pipeline prints some
// warnings only its passes and code generator find: a stack frame over
// -Wframe-larger-than (function attribute "warn-stack-size"), a loop
// transformation a pragma forces that did not happen (-Wpass-failed: loop
// metadata such as llvm.loop.vectorize.enable 1 or unroll.count 8; not
// what merely allows or forbids one, such as the unroll.disable clang puts
// on every loop at -O1), a call left to a function marked
// __attribute__((error/warning)) ("dontcall-error"/"dontcall-warn").
// Another pipeline may print none of them, so a -Werror build clang fails
// passed through the wrapper. The wrapper runs clang's pipeline on a copy
// of such a module for its diagnostics alone (tu_optimizer.cc): whatever it
// prints makes the compile fall back to clang, which prints it its own way.

#include "llvm/IR/Module.h"

namespace phaseloop::cc_wrapper {

// Whether `module` holds anything from which clang's pipeline prints
// warnings another pipeline may not.
bool HasPipelineDependentDiagnostics(const llvm::Module& module);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_PIPELINE_DIAGNOSTICS_H_
