#include "common/command/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace phaseloop::command {
namespace {

TEST(StopSignalsTest, FlagIsSetBySigtermAndClearedOnReinstall) {
  const std::atomic<bool>* stop = StopFlagOnSignals();
  EXPECT_FALSE(stop->load());
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_TRUE(stop->load());
  EXPECT_FALSE(StopFlagOnSignals()->load());
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_TRUE(stop->load());
}

TEST(StopSignalsTest, BlockedSignalsAreWaitedForAndTheMaskRestored) {
  sigset_t before;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  {
    BlockedStopSignals blocked;
    ASSERT_EQ(kill(getpid(), SIGTERM), 0);  // pending, not delivered
    EXPECT_EQ(blocked.Wait(), SIGTERM);
  }
  sigset_t after;
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_EQ(sigismember(&after, SIGTERM), sigismember(&before, SIGTERM));
  EXPECT_EQ(sigismember(&after, SIGINT), sigismember(&before, SIGINT));
}

}  // namespace
}  // namespace phaseloop::command
