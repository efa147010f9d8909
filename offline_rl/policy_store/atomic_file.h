#ifndef PHASELOOP_OFFLINE_RL_POLICY_STORE_ATOMIC_FILE_H_
#define PHASELOOP_OFFLINE_RL_POLICY_STORE_ATOMIC_FILE_H_

// Durable whole-file replacement for the policy store's files: a reader (or
// a process started after a crash at any point) sees the old file or the
// whole new one, never a mix. Thread-safe (temp names are unique per call).

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace phaseloop::policy_store {

// Prefix of the temporary files WriteFileAtomically leaves behind when the
// process dies mid-write; whoever owns the directory may delete them.
inline constexpr char kTempFilePrefix[] = ".tmp-";

// Writes `content` to a temp file beside `path`, fsyncs it, renames it over
// `path` and fsyncs the directory. On failure `path` is untouched and the
// temp file removed; the status (Internal, or InvalidArgument when the
// directory cannot be written) names `path` and the OS error.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content);

// Reads the whole file at `path`. NotFound when it does not exist.
absl::Status ReadWholeFile(const std::string& path, std::string* content);

}  // namespace phaseloop::policy_store

#endif  // PHASELOOP_OFFLINE_RL_POLICY_STORE_ATOMIC_FILE_H_
