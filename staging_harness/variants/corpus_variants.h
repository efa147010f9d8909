#ifndef PHASELOOP_STAGING_HARNESS_VARIANTS_CORPUS_VARIANTS_H_
#define PHASELOOP_STAGING_HARNESS_VARIANTS_CORPUS_VARIANTS_H_

// The lab's interface for stages that measure compiled variants of a
// corpus's modules (the learner's candidate mining and `phaseloop eval`):
// which modules a corpus split holds, and running one measurement per module
// in a forked child with a time limit on a pool of threads, so a pipeline
// that crashes or hangs LLVM costs that module and not the run. Only this
// header, the best-sequences reader and the test corpora of the lab are
// visible to offline_rl (Bazel visibility).

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/process/child_process.h"
#include "phaseloop/v1/episode.pb.h"
#include "staging_harness/search/search_inputs.h"

namespace phaseloop::staging {

// One module: a corpus entry, or a C/C++ source, .bc or .ll file.
using CorpusModule = search::ModuleInput;

// The modules of DIR: a corpus directory (its manifest.json, of `split` when
// not empty; entries without bitcode are skipped with a warning) or else
// every source, .bc and .ll file directly in DIR, sorted by name.
absl::StatusOr<std::vector<CorpusModule>> ListCorpusModules(
    const std::string& dir, const std::string& split,
    std::vector<std::string>* warnings);

// The manifest records of corpus DIR that have bitcode, of `split` when not
// empty, in name order. NotFound / InvalidArgument name DIR's manifest.
absl::StatusOr<std::vector<v1::ModuleRecord>> ReadCorpusRecords(
    const std::string& dir, const std::string& split);

struct ChildMeasureOptions {
  int threads = 1;          // modules measured at once
  int timeout_ms = 600000;  // per module; the child is killed after it
};

// What one module's child returned: kOk with its report, or failed, crashed
// or timed out with a message (process::ChildOutcome).
using MeasureOutcome = process::ChildOutcome;

// Calls measure(i) for every i in [0, n), each in a forked child process
// limited to options.timeout_ms, options.threads at a time; `done(i,
// outcome, elapsed_ms)` runs in this process, one call at a time, with the
// child's wall time (callers need no lock
// for what only `done` touches). `measure` must not rely on state it changes
// in this process: it runs in a copy of it. Returns when all are done.
void MeasureEachInChild(
    size_t n, const ChildMeasureOptions& options,
    const std::function<absl::StatusOr<std::string>(size_t)>& measure,
    const std::function<void(size_t, const MeasureOutcome&, double)>& done);

}  // namespace phaseloop::staging

#endif  // PHASELOOP_STAGING_HARNESS_VARIANTS_CORPUS_VARIANTS_H_
