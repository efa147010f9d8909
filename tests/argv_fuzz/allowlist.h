#ifndef PHASELOOP_TESTS_ARGV_FUZZ_ALLOWLIST_H_
#define PHASELOOP_TESTS_ARGV_FUZZ_ALLOWLIST_H_

// The allowlist of known disagreements (known_disagreements.txt).

#include <set>
#include <string>
#include <vector>

#include "tests/argv_fuzz/compare.h"
#include "tests/argv_fuzz/fuzz_case.h"

namespace phaseloop::argv_fuzz {

// One line per entry:
//   NAME [args=TOK[,TOK...]] differs=KIND[,KIND...] [stderr-has=TEXT]
// A disagreement is covered when every TOK matches some argument of its
// argv (response files expanded; a TOK ending in '*' matches by prefix),
// every kind it differs in is one of the KINDs, and clang's stderr
// (normalised) contains TEXT.
struct KnownEntry {
  std::string name;
  std::vector<std::string> args;
  std::string stderr_has;
  std::set<std::string> kinds;
  int line = 0;
};

// Reads the entries of `path`; false with `error` naming the line otherwise.
bool LoadAllowlist(const std::string& path, std::vector<KnownEntry>* entries,
                   std::string* error);
// The entry covering case `c`'s difference `d`, or null.
const KnownEntry* Covering(const std::vector<KnownEntry>& entries,
                           const Case& c, const Difference& d);

}  // namespace phaseloop::argv_fuzz

#endif  // PHASELOOP_TESTS_ARGV_FUZZ_ALLOWLIST_H_
