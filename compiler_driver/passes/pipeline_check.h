#ifndef PHASELOOP_COMPILER_DRIVER_PASSES_PIPELINE_CHECK_H_
#define PHASELOOP_COMPILER_DRIVER_PASSES_PIPELINE_CHECK_H_

// What a policy may make the compiler run. Every pipeline a policy carries
// (fixed:, table: rows, policy files, artifact candidates) is checked when
// the policy is loaded, so nothing the policy store serves can change what a
// program means: a pipeline may hold only
//   - the passes of the versioned action space (llvm-16/actions.tsv), with
//     any parameters LLVM accepts for them ("sroa", "sroa<modify-cfg>"),
//   - under the adaptors module(...), cgscc(...), function(...), loop(...)
//     and loop-mssa(...),
//   - the standard pipelines default<O0|O1|O2|O3|Os|Oz>, and at the top
//     level tuned<LEVEL;...> (tuned_pipeline.h, llvm-16/tuning.tsv);
//   - in test binaries only, the passes they link in (pass_extensions.h).
// Anything else — internalize (changes every symbol's linkage), strip,
// instrumentation, a pass the action tests excluded, an unknown name — is
// refused with the offending element named (and why, for the passes
// llvm-16/excluded*.tsv lists). Some passes of the action space are refused
// too, as each can change what a program means: lower-ifunc (erases
// exported ifuncs), lower-constant-intrinsics (before inlining, removes
// _FORTIFY_SOURCE's checks), lower-global-dtors (reorders destructors
// against atexit handlers) and attributor/attributor-cgscc (LLVM 16's
// Attributor miscompiles correct programs). A pipeline may nest adaptors at
// most 16 deep and hold at most 1000 elements, 8 of them standard pipelines: no
// policy can exhaust the compiler's stack, memory or time. The codegen<...>
// element is checked by codegen::SplitPipeline, not here. Pure functions;
// thread-safe.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace phaseloop::passes {

// OK when `ir_pipeline` (PassBuilder text without its codegen<...> element)
// holds only what a policy may run; otherwise InvalidArgument naming the
// first offending element, with IsRefusedPipeline true. An empty pipeline is
// OK (nothing runs).
absl::Status CheckPolicyPipeline(absl::string_view ir_pipeline);

// A whole policy pipeline, as a policy carries it: a well-formed last
// codegen<...> element (codegen::SplitPipeline) and an IR part
// CheckPolicyPipeline allows. `context` (e.g. "candidate 'c003'"), when not
// empty, starts the message as "<context>: "; the refusal payload is kept.
absl::Status CheckWholePolicyPipeline(absl::string_view pipeline,
                                      absl::string_view context = "");

// Whether `status` is CheckPolicyPipeline's refusal (it carries a payload),
// so that the wrapper can count a refused policy apart from a missing one.
bool IsRefusedPipeline(const absl::Status& status);

// Whether the refusal is of a pass of the action space that no policy may
// run (lower-ifunc, attributor, ...): an artifact may carry a candidate
// holding one (trained before the pass was refused); it is never measured
// or chosen (policy_runtime/artifact_policy.cc).
bool IsNotForPolicies(const absl::Status& status);

}  // namespace phaseloop::passes

#endif  // PHASELOOP_COMPILER_DRIVER_PASSES_PIPELINE_CHECK_H_
