#include "compiler_driver/cc_wrapper/stderr_capture.h"

#include <unistd.h>

#include "compiler_driver/cc_wrapper/stage_trace.h"

namespace phaseloop::cc_wrapper {

StderrCapture::StderrCapture() {
  std::fflush(stderr);
  file_ = std::tmpfile();
  if (file_ == nullptr) return;
  saved_fd_ = dup(STDERR_FILENO);
  if (saved_fd_ < 0 || dup2(fileno(file_), STDERR_FILENO) < 0) {
    if (saved_fd_ >= 0) close(saved_fd_);
    saved_fd_ = -1;
    std::fclose(file_);
    file_ = nullptr;
    return;
  }
  const int for_stream = dup(saved_fd_);
  if (for_stream >= 0) original_ = fdopen(for_stream, "w");
  if (original_ != nullptr) TraceStream() = original_;
}

StderrCapture::~StderrCapture() {
  if (!active()) return;
  TraceStream() = stderr;
  std::fflush(stderr);
  dup2(saved_fd_, STDERR_FILENO);
  close(saved_fd_);
  if (original_ != nullptr) std::fclose(original_);
  std::fclose(file_);
}

std::string StderrCapture::Captured(size_t limit) const {
  if (!active()) return "";
  std::fflush(stderr);
  std::string text(limit, '\0');
  const ssize_t read = pread(fileno(file_), text.data(), limit, 0);
  text.resize(read > 0 ? static_cast<size_t>(read) : 0);
  return text;
}

}  // namespace phaseloop::cc_wrapper
