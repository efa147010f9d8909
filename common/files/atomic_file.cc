#include "common/files/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace phaseloop::files {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool WriteAll(int fd, absl::string_view content) {
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n =
        write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

// Makes a new or renamed directory entry of `path` durable (best effort).
void SyncDirectoryOf(const std::string& path) {
  const int dir_fd =
      open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
}

}  // namespace

std::string TempPathFor(const std::string& path) {
  static std::atomic<int> counter{0};
  const size_t slash = path.rfind('/');
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  return absl::StrCat(DirectoryOf(path), "/", kTempFilePrefix, base, ".",
                      getpid(), ".", counter.fetch_add(1));
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content, mode_t mode) {
  const std::string directory = DirectoryOf(path);
  const std::string temp = TempPathFor(path);
  const int fd =
      open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write ", path, ": ", std::strerror(errno), " (does directory ",
        directory, " exist and is it writable?)"));
  }
  bool ok = WriteAll(fd, content) && fchmod(fd, mode) == 0;
  int error = errno;
  close(fd);
  if (!ok) {
    unlink(temp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return CommitFile(temp, path);
}

absl::Status CommitFile(const std::string& temp, const std::string& path) {
  // Test hook: a crash after the data is written, before the rename.
  if (const char* crash = std::getenv("PHASELOOP_TEST_CRASH_BEFORE_RENAME");
      crash != nullptr && path.find(crash) != std::string::npos) {
    std::abort();
  }
  const int fd = open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && fsync(fd) == 0;
  int error = errno;
  if (fd >= 0) close(fd);
  if (ok && rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    unlink(temp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  SyncDirectoryOf(path);  // make the rename itself durable
  return absl::OkStatus();
}

absl::Status MakeDirectories(const std::string& directory) {
  if (directory.empty() || directory == "/" || directory == ".") {
    return absl::OkStatus();
  }
  struct stat st;
  if (stat(directory.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(directory, " exists and is not a directory"));
  }
  absl::Status parent = MakeDirectories(DirectoryOf(directory));
  if (!parent.ok()) return parent;
  if (mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot create directory ", directory, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status AppendDurably(const std::string& path, absl::string_view line) {
  absl::Status made = MakeDirectories(DirectoryOf(path));
  if (!made.ok()) return made;
  bool created = false;
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    created = fd >= 0;
  }
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot append to ", path, ": ", std::strerror(errno),
                     " (is its directory writable?)"));
  }
  bool ok = WriteAll(fd, line) && fsync(fd) == 0;
  const int error = errno;
  close(fd);
  if (!ok) {
    return absl::InternalError(
        absl::StrCat("cannot append to ", path, ": ", std::strerror(error)));
  }
  if (created) SyncDirectoryOf(path);
  return absl::OkStatus();
}

absl::Status ReadWholeFile(const std::string& path, std::string* content) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return absl::NotFoundError(absl::StrCat(path, " does not exist"));
    }
    return absl::InternalError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
  }
  content->clear();
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return absl::InternalError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    content->append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return absl::OkStatus();
}

}  // namespace phaseloop::files
