#ifndef PHASELOOP_COMMON_FILES_ATOMIC_FILE_H_
#define PHASELOOP_COMMON_FILES_ATOMIC_FILE_H_

// Durable whole-file replacement, the one way phaseloop writes a file that
// others read (artifacts, manifests, candidates, checkpoints, the policy
// store's index, toolchain files): a reader, or a process started after a
// crash or power cut at any point, sees the old file or the whole new one,
// never a mix and never an empty file under the final name. Thread-safe
// (temp names are unique per call). The compile path's per-compile outputs
// (objects, decision spool files) are renamed into place without fsync, as
// clang writes objects: a build is not slowed by a disk flush per file.

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace phaseloop::files {

// Prefix of the temporary files WriteFileAtomically leaves behind when the
// process dies mid-write; whoever owns the directory may delete them.
inline constexpr char kTempFilePrefix[] = ".tmp-";

// Writes `content` to a temp file beside `path`, fsyncs it, renames it over
// `path` and fsyncs the directory. On failure `path` is untouched and the
// temp file removed; the status (Internal, or InvalidArgument when the
// directory cannot be written) names `path` and the OS error.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content, mode_t mode = 0644);

// For files another library writes (a torch checkpoint): a fresh temp path
// beside `path` to write to, then CommitFile(temp, path) fsyncs it, renames
// it over `path` and fsyncs the directory (on failure the temp file is
// removed and `path` untouched).
std::string TempPathFor(const std::string& path);
absl::Status CommitFile(const std::string& temp, const std::string& path);

// Appends `line` (one record, ending in '\n') to `path`, creating it (and
// missing parent directories) if needed, in one O_APPEND write, then fsyncs
// it (and the directory when the file is new). For append-only logs several
// processes write: concurrent appends never interleave within a record, and
// a crash mid-write leaves at most a torn last line, which readers skip.
absl::Status AppendDurably(const std::string& path, absl::string_view line);

// Creates `directory` and its missing parents (mode 0755). InvalidArgument
// naming the directory and the OS error when it cannot.
absl::Status MakeDirectories(const std::string& directory);

// Reads the whole file at `path`. NotFound when it does not exist.
absl::Status ReadWholeFile(const std::string& path, std::string* content);

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_ATOMIC_FILE_H_
