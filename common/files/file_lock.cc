#include "common/files/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

namespace phaseloop::files {

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<FileLock> FileLock::Acquire(const std::string& path,
                                           int64_t timeout_ms,
                                           const std::atomic<bool>* stop) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot open the lock file ", path, ": ", strerror(errno)));
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int error = errno;
      close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat("cannot lock ", path, ": ", strerror(error)));
    }
    if (stop != nullptr && stop->load()) {
      close(fd);
      return absl::CancelledError(absl::StrCat("stopped waiting for ", path));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      close(fd);
      return absl::UnavailableError(absl::StrCat(
          path, " is locked by another process driving the same state"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return FileLock(fd);
}

bool FileLock::IsHeld(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // A shared lock is refused only while someone holds the exclusive one.
  int rc;
  do {
    rc = flock(fd, LOCK_SH | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  const bool held = rc != 0 && errno == EWOULDBLOCK;
  close(fd);  // drops the shared lock, if taken
  return held;
}

}  // namespace phaseloop::files
