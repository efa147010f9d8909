#include "compiler_driver/cc_wrapper/stderr_capture.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace phaseloop::cc_wrapper {
namespace {

TEST(StderrCaptureTest, CapturesWhatIsWrittenToFdTwoAndRestoresIt) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int saved = dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_GE(dup2(pipe_fds[1], STDERR_FILENO), 0);  // "the user's stderr"
  std::string captured, empty_before;
  {
    StderrCapture capture;
    ASSERT_TRUE(capture.active());
    empty_before = capture.Captured();
    EXPECT_FALSE(StderrCapture::ActiveCapturedAnything());
    std::fprintf(stderr, "warning: from stdio\n");
    EXPECT_TRUE(StderrCapture::ActiveCapturedAnything());
    ASSERT_EQ(write(STDERR_FILENO, "error: raw\n", 11), 11);
    std::fprintf(capture.original(), "trace line\n");
    std::fflush(capture.original());
    captured = capture.Captured();
    EXPECT_EQ(capture.Captured(7), "warning");
  }
  EXPECT_FALSE(StderrCapture::ActiveCapturedAnything());  // none active
  std::fprintf(stderr, "after\n");
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(pipe_fds[1]);
  char buffer[256];
  const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
  close(pipe_fds[0]);
  EXPECT_EQ(empty_before, "");
  EXPECT_EQ(captured, "warning: from stdio\nerror: raw\n");
  // The original stream and the restored fd 2 reach the user's stderr.
  EXPECT_EQ(std::string(buffer, n > 0 ? n : 0), "trace line\nafter\n");
}

}  // namespace
}  // namespace phaseloop::cc_wrapper
