#ifndef PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_SPACE_H_
#define PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_SPACE_H_

// The decision spool's size cap, as ccache's max_size. The spool holds
// unshipped records (`*.decisions`) and shipped ones kept for `phaseloop
// stats` (`*.shipped`: `decisions ship` renames what it stored). Its size
// is kept in `<spool>/spool.counters` (one text line, rewritten under an
// exclusive flock by every writer, so concurrent compiles agree):
//   - a write that would take the spool over the cap first deletes the
//     oldest shipped files, down to 90 % of the cap (so that the next
//     writes need no cleanup);
//   - if only unshipped records are left over the cap, the new batch is not
//     written and its records are counted as dropped (`phaseloop stats`
//     shows them); the compile goes on. Unshipped records are never deleted.
// Sizes are counted in whole 4 KiB blocks per file (what `du` shows for
// these small files on common file systems). A spool without a counters
// file (new, or older phaseloop) is measured once by a directory scan;
// `decisions ship` measures it again (hand-deleted files are then
// forgotten).
//
// Standard library and POSIX only: the launcher links this.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace phaseloop::cc_wrapper {

// Suffixes of complete unshipped and shipped spool files.
inline constexpr char kSpoolSuffix[] = ".decisions";
inline constexpr char kShippedSuffix[] = ".shipped";
inline constexpr char kCountersFile[] = "spool.counters";
inline constexpr int64_t kDefaultSpoolMaxSize = int64_t{64} << 20;  // 64 MiB

struct SpoolCounters {
  int64_t bytes = 0;            // *.decisions and *.shipped, in 4 KiB blocks
  int64_t shipped_bytes = 0;    // of which *.shipped
  int64_t dropped_records = 0;  // not written: full of unshipped records
  int64_t evicted_files = 0;    // shipped files deleted to make room
  int64_t failed_records = 0;   // not written: the file could not be (disk
                                // full, no permission)
};

// `file_size` rounded up to whole 4 KiB blocks.
int64_t SpoolBytes(int64_t file_size);

// Parses a size: bytes, or a number with a suffix K, M, G (powers of
// 1000) or Ki, Mi, Gi (powers of 1024), an optional trailing "B"
// ("64MiB", "500M", "1G"); 0 means no cap. False for anything else.
bool ParseSize(const std::string& text, int64_t* bytes);

// Under the spool's lock: makes room for a file of `file_size` bytes
// holding `records` records when the spool (capped at `max_size`; 0 = no
// cap) can take it, and calls `write` (which returns whether the file was
// written). When it cannot, counts the records as dropped and returns
// false with `error` saying so; records `write` failed to write count as
// failed. Accounting problems (no counters file can
// be created) never stop a write: `write` then runs without them.
bool WriteWithinCap(const std::string& dir, int64_t file_size, int records,
                    int64_t max_size, const std::function<bool()>& write,
                    std::string* error);

// Renames each `*.decisions` file of `paths` to `*.shipped` and measures
// the spool again, under the lock. Paths that cannot be renamed are left.
void MarkShipped(const std::string& dir, const std::vector<std::string>& paths);

// The counters as last written (shared lock); false when there is no
// counters file or it does not parse.
bool ReadSpoolCounters(const std::string& dir, SpoolCounters* counters);

}  // namespace phaseloop::cc_wrapper

#endif  // PHASELOOP_COMPILER_DRIVER_CC_WRAPPER_SPOOL_SPACE_H_
