#ifndef PHASELOOP_STAGING_HARNESS_CORPUS_PROGRAM_DISCOVERY_H_
#define PHASELOOP_STAGING_HARNESS_CORPUS_PROGRAM_DISCOVERY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phaseloop::corpus {

// The C sources of one directory of a source tree, and the frontend flags
// they need. Which programs they form is decided after compiling them (see
// corpus_builder.h): this step only reads the file system.
//
// Rule, for any directory of C sources (e.g. an unpacked Debian package):
//  - Every directory under the root holding `.c` files is one group, except
//    directories that are hidden (`.pc` holds quilt's unpatched copies) or
//    named for tests, examples, docs, benchmarks, fuzzers, packaging or other
//    platforms (kExcludedDirs in the .cc; case-insensitive).
//  - Files named like tests (stem starting with "test" or ending in "test" /
//    "tests") are left out unless DiscoveryOptions keeps them, and so is any
//    `.c` that another `.c` of the same directory #includes (it is part of
//    that file, not a translation unit). Everything left out is listed with
//    its reason (Discovery::left_out).
//  - Include path: the directory, its parents up to the root, and the
//    tree's `include`, `headers` and `lib` directories (depth <= 2); then,
//    for `#include "..."` only (-iquote), every other directory of the tree
//    holding `.h` files (as Makefiles add -I for sibling directories). When a
//    `config.h` is found in the directory or a parent up to the root (e.g.
//    written by ./configure), the group gets `-DHAVE_CONFIG_H -include` it.
//  - Per-program flags: a file named `phaseloop-cflags` (kCflagsFileName)
//    in a directory gives frontend flags to the sources of that directory
//    and every directory below it, nearer files last (so they win), after
//    the run's own --cflag flags: one run can build a suite whose programs
//    need their own defines. Flags are separated by white space, `#` starts
//    a comment; each must start with `-`, and output or mode flags (-o, -c,
//    -S, -E, -M...) are refused, naming the file and line.
struct SourceGroup {
  std::string name;  // "<root name>" or "<root name>/<relative dir>"
  std::string dir;   // absolute
  std::vector<std::string> sources;        // absolute paths, sorted
  std::vector<std::string> frontend_args;  // -I, -D, -include
  // From phaseloop-cflags files, the root's first; go after --cflag.
  std::vector<std::string> directory_cflags;
};

inline constexpr char kCflagsFileName[] = "phaseloop-cflags";

// The flags of one phaseloop-cflags file's text; InvalidArgument names
// `path` and the line of a flag that is not one or is refused.
absl::StatusOr<std::vector<std::string>> ParseCflagsFile(
    const std::string& text, const std::string& path);

// A path under the root that discovery left out of every group, and why:
// the corpus manifest lists it under `skipped`, so nothing is dropped
// without a word.
struct LeftOutPath {
  std::string path;    // absolute
  std::string kind;    // "source" (one C file) or "directory"
  std::string reason;  // e.g. "named like a test (--keep-test-sources keeps it)"
};

struct DiscoveryOptions {
  // Keep C files named like tests (`corpus build --keep-test-sources`): a
  // program's driver named `*_test.c` may hold its `main`.
  bool keep_test_sources = false;
};

struct Discovery {
  std::vector<SourceGroup> groups;    // stable (sorted) order
  std::vector<LeftOutPath> left_out;  // sorted by path; directories only
                                      // when they hold C sources
};

// The groups of `root`. `root_name` names the tree in module names (e.g.
// the Debian package). NotFound when root is not a directory; no groups
// when it holds no C sources.
absl::StatusOr<Discovery> DiscoverSourceGroups(
    const std::string& root, const std::string& root_name,
    const DiscoveryOptions& options = {});

// True for a file stem that names a test ("test", "pngtest", "test_util").
bool IsTestFileStem(const std::string& stem);

}  // namespace phaseloop::corpus

#endif  // PHASELOOP_STAGING_HARNESS_CORPUS_PROGRAM_DISCOVERY_H_
