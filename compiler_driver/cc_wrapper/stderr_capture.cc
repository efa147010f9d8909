#include "compiler_driver/cc_wrapper/stderr_capture.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler_driver/cc_wrapper/stage_trace.h"

namespace phaseloop::cc_wrapper {
namespace {

const StderrCapture* active_capture = nullptr;

// An anonymous file in memory (no file system needed), else an unlinked
// temporary file; close-on-exec either way. -1 when neither can be made.
int CaptureFile() {
  int fd = memfd_create("phaseloop-stderr", MFD_CLOEXEC);
  if (fd >= 0) return fd;
  FILE* file = std::tmpfile();
  if (file == nullptr) return -1;
  fd = fcntl(fileno(file), F_DUPFD_CLOEXEC, 0);
  std::fclose(file);
  return fd;
}

}  // namespace

StderrCapture::StderrCapture() {
  std::fflush(stderr);
  file_fd_ = CaptureFile();
  if (file_fd_ < 0) return;
  saved_fd_ = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
  if (saved_fd_ < 0 || dup2(file_fd_, STDERR_FILENO) < 0) {
    if (saved_fd_ >= 0) close(saved_fd_);
    saved_fd_ = -1;
    close(file_fd_);
    file_fd_ = -1;
    return;
  }
  const int for_stream = fcntl(saved_fd_, F_DUPFD_CLOEXEC, 0);
  if (for_stream >= 0) original_ = fdopen(for_stream, "w");
  if (original_ != nullptr) {
    // Line by line: a trace line is out before a crash or a timeout's kill.
    setvbuf(original_, nullptr, _IOLBF, 0);
    TraceStream() = original_;
  }
  active_capture = this;
}

StderrCapture::~StderrCapture() {
  if (!active()) return;
  if (active_capture == this) active_capture = nullptr;
  TraceStream() = stderr;
  std::fflush(stderr);
  dup2(saved_fd_, STDERR_FILENO);
  close(saved_fd_);
  if (original_ != nullptr) std::fclose(original_);
  close(file_fd_);
}

std::string StderrCapture::Captured(size_t limit) const {
  if (!active()) return "";
  std::fflush(stderr);
  std::string text(limit, '\0');
  const ssize_t read = pread(file_fd_, text.data(), limit, 0);
  text.resize(read > 0 ? static_cast<size_t>(read) : 0);
  return text;
}

bool StderrCapture::ActiveCapturedAnything() {
  if (active_capture == nullptr) return false;
  std::fflush(stderr);
  struct stat st;
  return fstat(active_capture->file_fd_, &st) == 0 && st.st_size > 0;
}

}  // namespace phaseloop::cc_wrapper
