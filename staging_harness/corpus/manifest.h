#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_MANIFEST_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_MANIFEST_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "phaseloop/v1/episode.pb.h"

namespace phaseloop::corpus {

// A program (or source, or package) that did not become a module, and why.
struct SkippedEntry {
  std::string name;    // the module name it would have had, or the package
  std::string origin;  // as ModuleRecord.origin
  std::string kind;    // "program", "source" (one C file), "package"
  std::string reason;  // clang's first errors, the link error, ...
};

// A corpus directory's index: DIR/manifest.json, one file for people and
// machines alike. `modules` entries carry exactly the ModuleRecord fields
// (proto field names), so any JSON reader can map them onto the proto.
// One corpus holds one convention and one frontend -O level.
struct Manifest {
  std::string convention;  // "real-build" or "research"
  std::string opt_level;   // "Oz", "O3" (real-build) or "O0" (research)
  std::vector<v1::ModuleRecord> modules;  // sorted by name
  std::vector<SkippedEntry> skipped;      // sorted by origin, name
};

inline constexpr char kManifestFile[] = "manifest.json";
inline constexpr char kModulesDir[] = "modules";

// Deterministic split of a program by its NAME alone (never by its content or
// by the rest of the corpus, so a program keeps its split when the corpus
// grows or is rebuilt): BLAKE3(name) mod 100 -> [0,80) "train", [80,90)
// "validation", [90,100) "test".
std::string SplitForName(const std::string& name);

// Reads DIR/manifest.json. A missing file is NotFound; a malformed one is
// InvalidArgument naming the file.
absl::StatusOr<Manifest> ReadManifest(const std::string& corpus_dir);

// Writes DIR/manifest.json atomically (temp file + rename), sorted, with
// per-split counts and totals for people reading it.
absl::Status WriteManifest(const std::string& corpus_dir, Manifest manifest);

// Replaces everything `update` says about its origins: entries of `base`
// whose origin appears in `rebuilt_origins` are dropped, then `update`'s
// modules and skipped entries are added (a module name present in both keeps
// the update). Returns bitcode paths that no module references any more.
std::vector<std::string> MergeManifest(
    Manifest& base, const Manifest& update,
    const std::set<std::string>& rebuilt_origins);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_MANIFEST_H_
