#ifndef PHASELOOP_COMMON_FILES_FILE_LOCK_H_
#define PHASELOOP_COMMON_FILES_FILE_LOCK_H_

// One process at a time drives a durable state (a canary run, a loop): an
// exclusive flock on a lock file beside it, released when the holder exits
// however it exits (the kernel drops it with the last descriptor; the
// descriptor is close-on-exec, so children the holder starts do not keep
// it).

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace phaseloop::files {

class FileLock {
 public:
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock();

  // Takes the lock on `path` (created if missing), waiting up to
  // `timeout_ms` for a holder to let go (0: one try). Unavailable naming the
  // file when it is still held then, Cancelled when `*stop` became true.
  static absl::StatusOr<FileLock> Acquire(
      const std::string& path, int64_t timeout_ms,
      const std::atomic<bool>* stop = nullptr);

  // Whether a process holds the lock on `path` now (false when the file is
  // missing). Takes nothing and creates nothing: what a lister asks.
  static bool IsHeld(const std::string& path);

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace phaseloop::files

#endif  // PHASELOOP_COMMON_FILES_FILE_LOCK_H_
