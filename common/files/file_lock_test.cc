#include "common/files/file_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include "common/testing/test_util.h"
#include "gtest/gtest.h"

namespace phaseloop::files {
namespace {

TEST(FileLockTest, OneHolderAtATimeAndReleasedWithTheHolder) {
  const std::string path = testing::MakeTempDir() + "/lock";
  {
    auto held = FileLock::Acquire(path, 0);
    ASSERT_TRUE(held.ok()) << held.status();
    // Another open file description cannot take it while it is held.
    auto second = FileLock::Acquire(path, 100);
    EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_NE(second.status().message().find(path), std::string::npos);
    EXPECT_TRUE(FileLock::IsHeld(path));
    EXPECT_TRUE(FileLock::IsHeld(path));  // asking takes nothing
  }
  EXPECT_FALSE(FileLock::IsHeld(path));
  EXPECT_TRUE(FileLock::Acquire(path, 0).ok());  // released
}

TEST(FileLockTest, AMissingLockFileIsNotHeldAndNotCreated) {
  const std::string path = testing::MakeTempDir() + "/lock";
  EXPECT_FALSE(FileLock::IsHeld(path));
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(FileLockTest, AWaiterGetsItWhenAnotherProcessDies) {
  const std::string path = testing::MakeTempDir() + "/lock";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = FileLock::Acquire(path, 0);
    char byte = held.ok() ? 1 : 0;
    (void)!write(ready[1], &byte, 1);
    usleep(300 * 1000);
    _exit(0);  // dies holding it
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 1);
  EXPECT_EQ(FileLock::Acquire(path, 0).status().code(),
            absl::StatusCode::kUnavailable);
  auto waited = FileLock::Acquire(path, 30000);
  EXPECT_TRUE(waited.ok()) << waited.status();
  waitpid(child, nullptr, 0);
}

TEST(FileLockTest, AStopEndsTheWait) {
  const std::string path = testing::MakeTempDir() + "/lock";
  auto held = FileLock::Acquire(path, 0);
  ASSERT_TRUE(held.ok());
  std::atomic<bool> stop{true};
  EXPECT_EQ(FileLock::Acquire(path, 60000, &stop).status().code(),
            absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace phaseloop::files
