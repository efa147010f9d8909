#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_DEBIAN_SOURCES_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_DEBIAN_SOURCES_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::corpus {

// Debian 12 (bookworm) source packages as trees of C sources.
//
// Cache layout (shared with tools/fetch_sources.sh): CACHE/<pkg>_<ver>.dsc,
// its tarballs, and the unpacked tree CACHE/<pkg>/ (dpkg-source -x: orig
// tarball + Debian patches) marked by CACHE/<pkg>/.phaseloop-unpacked. apt
// runs with a private deb-src list and private lists/cache directories in
// CACHE/.apt; the system's apt configuration is never touched. Idempotent
// and resumable: a package already unpacked is not looked up again (no
// network), and an interrupted download leaves nothing under final names.

// The default list: 30+ real packages (compression, parsers, interpreters,
// crypto, image and text tools) whose C sources build with at most
// ./configure. Never cBench, MiBench, PolyBench or the LLVM test-suite.
const std::vector<std::string>& DefaultDebianPackages();

// ~/.cache/phaseloop/debian-src ($PHASELOOP_CACHE/debian-src when set; the
// passwd home when $HOME is unset).
std::string DefaultDebianCache();

struct DebianSource {
  std::string package;
  std::string version;  // from the .dsc name, e.g. "1.0.8-5"
  std::string tree;     // CACHE/<pkg>
  std::string origin() const { return "debian:" + package + "_" + version; }
};

// The package if it is already unpacked in the cache; NotFound otherwise.
absl::StatusOr<DebianSource> CachedDebianSource(const std::string& cache,
                                                const std::string& package);

// Fetcher for one cache; updates the private index at most once per object.
// Not thread-safe.
class DebianFetcher {
 public:
  explicit DebianFetcher(std::string cache) : cache_(std::move(cache)) {}
  // Cached, or downloaded and unpacked. Errors name the package and the step.
  absl::StatusOr<DebianSource> Fetch(const std::string& package,
                                     std::ostream& progress);

 private:
  absl::Status UpdateIndex(std::ostream& progress);
  std::vector<std::string> AptOptions() const;

  std::string cache_;
  bool index_updated_ = false;
};

// A private copy of the package's tree under `work_root`/<pkg> to configure
// and build in, so the shared cache stays as dpkg-source left it. Reused
// when it holds the same version; replaced otherwise. Returns its path.
absl::StatusOr<std::string> PrepareWorkTree(const DebianSource& source,
                                            const std::string& work_root);

// Runs `./configure` (CC=clang-16) in the tree when it has a configure
// script and no config.h yet, with a time limit. Idempotent: the outcome is
// kept in <tree>/.phaseloop-configured and not retried. A failure is not an
// error (the sources may still build): returns a note for the log, "" when
// configure succeeded or was not needed.
std::string ConfigureTree(const std::string& tree, double timeout_seconds);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_DEBIAN_SOURCES_H_
