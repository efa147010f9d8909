#include "common/process/process_gone.h"

#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace phaseloop::process {
namespace {

TEST(ProcessGoneTest, ThisProcessIsNotGone) {
  EXPECT_FALSE(ProcessGone(getpid()));
}

TEST(ProcessGoneTest, AReapedChildIsGone) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(ProcessGone(child));
}

TEST(ProcessGoneTest, AnUnreapedChildIsNotGoneYet) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  // A zombie still holds its pid: nothing else can have it yet.
  EXPECT_FALSE(ProcessGone(child));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
}

TEST(ProcessGoneTest, ProcessGroupsAndZeroAreNeverGone) {
  EXPECT_FALSE(ProcessGone(0));
  EXPECT_FALSE(ProcessGone(-1));
}

}  // namespace
}  // namespace phaseloop::process
