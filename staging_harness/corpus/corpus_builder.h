#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_BUILDER_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_BUILDER_H_

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "staging_harness/corpus/manifest.h"
#include "staging_harness/corpus/module_writer.h"

namespace phaseloop::corpus {

// One tree of C sources to turn into modules.
struct SourceTree {
  std::string dir;
  std::string root_name;  // first component of its module names
  std::string origin;     // ModuleRecord.origin, e.g. "dir:/abs/path"
};

// Builds the modules of `trees` into `corpus_dir`/modules and returns what
// was built and skipped (not yet merged into the corpus manifest).
//
// Programs (after program_discovery.h has grouped sources by directory and
// each source was compiled, in parallel, by the corpus frontend):
//  - the sources of a directory that define no `main` are one module, named
//    after the directory (a library: every source linked with llvm::Linker);
//  - otherwise each source defining `main` is a program named
//    "<directory name>/<file stem>": that source linked with the definitions
//    it needs (transitively) from the directory's sources without a main;
//    when the programs together use under half of those sources' external
//    functions (generators, small tools beside a library), the library is
//    also a module, named after the directory.
// Sources are linked in sorted order; one that defines an external symbol an
// earlier one already defines is left out (skipped, with the symbol), so a
// directory of alternative implementations still builds. Calls to code in
// other directories stay declarations. A source that does not compile is
// skipped with clang's first errors; a program whose module fails to link,
// verify or measure is skipped with the reason.
// Progress goes to `progress`; parallel over settings.jobs threads, one
// LLVMContext per thread.
absl::StatusOr<Manifest> BuildModules(const std::vector<SourceTree>& trees,
                                      const CorpusSettings& settings,
                                      const std::string& corpus_dir,
                                      std::ostream& progress);

// The corpus at `corpus_dir`: its manifest, or an empty one for these
// settings. InvalidArgument when it holds another convention or -O level
// (one corpus, one kind of module).
absl::StatusOr<Manifest> OpenCorpus(const std::string& corpus_dir,
                                    const CorpusSettings& settings);

// Merges `update` into `base` (MergeManifest), removes bitcode files no
// module references any more, and writes the manifest.
absl::Status CommitCorpus(const std::string& corpus_dir, Manifest& base,
                          const Manifest& update,
                          const std::set<std::string>& rebuilt_origins);

struct CorpusTotals {
  int64_t modules = 0;
  int64_t skipped = 0;
  int64_t ir_count_o0 = 0;
  int64_t ir_count_oz = 0;
  int64_t ir_count_o3 = 0;
};
CorpusTotals Totals(const Manifest& manifest);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_CORPUS_BUILDER_H_
