// The --exit-when-idle-ms rule, on a clock the test moves.
#include "common/kafka/idle_exit.h"

#include <gtest/gtest.h>

namespace phaseloop::kafka {
namespace {

using std::chrono::milliseconds;
using Clock = IdleExit::Clock;

TEST(IdleExitTest, IdleCountsFromTheLastInputOnceAssigned) {
  const Clock::time_point t0{};
  IdleExit idle(milliseconds(500), t0, milliseconds(2000));
  // Joining the group: no partitions for 1.5 s is not idling.
  EXPECT_FALSE(idle.Due(false, t0 + milliseconds(1500)));
  EXPECT_FALSE(idle.Due(true, t0 + milliseconds(1600)));
  EXPECT_FALSE(idle.Due(true, t0 + milliseconds(1900)));
  idle.Input(t0 + milliseconds(1900));
  EXPECT_FALSE(idle.Due(true, t0 + milliseconds(2300)));
  EXPECT_TRUE(idle.Due(true, t0 + milliseconds(2400)));
  EXPECT_FALSE(idle.never_assigned());
}

// A broker that never answers: no partition ever, so it stops after the
// grace and says it was never assigned (it waited for ever before).
TEST(IdleExitTest, NoPartitionForTheWholeGraceIsDueAndSaysSo) {
  const Clock::time_point t0{};
  IdleExit idle(milliseconds(500), t0, milliseconds(2000));
  EXPECT_FALSE(idle.Due(false, t0 + milliseconds(1999)));
  EXPECT_TRUE(idle.Due(false, t0 + milliseconds(2000)));
  EXPECT_TRUE(idle.never_assigned());
  EXPECT_EQ(idle.unassigned_wait(), milliseconds(2000));
}

// Partitions held, then lost to a rebalance (more members than
// partitions): idle again after the grace, counted from the loss.
TEST(IdleExitTest, PartitionsLostCountFromTheLoss) {
  const Clock::time_point t0{};
  IdleExit idle(milliseconds(500), t0, milliseconds(2000));
  EXPECT_FALSE(idle.Due(true, t0 + milliseconds(100)));
  idle.Input(t0 + milliseconds(300));
  EXPECT_FALSE(idle.Due(false, t0 + milliseconds(400)));
  EXPECT_FALSE(idle.Due(false, t0 + milliseconds(2300)));
  EXPECT_TRUE(idle.Due(false, t0 + milliseconds(2400)));
  EXPECT_FALSE(idle.never_assigned());
}

// The grace is never shorter than the idle time asked for, and 0 means no
// idle exit at all.
TEST(IdleExitTest, TheGraceIsAtLeastTheIdleTimeAndZeroIsOff) {
  const Clock::time_point t0{};
  IdleExit long_idle(milliseconds(5000), t0, milliseconds(2000));
  EXPECT_FALSE(long_idle.Due(false, t0 + milliseconds(4999)));
  EXPECT_TRUE(long_idle.Due(false, t0 + milliseconds(5000)));
  IdleExit off(milliseconds(0), t0, milliseconds(2000));
  EXPECT_FALSE(off.Due(false, t0 + std::chrono::hours(1)));
  EXPECT_FALSE(off.Due(true, t0 + std::chrono::hours(2)));
}

}  // namespace
}  // namespace phaseloop::kafka
